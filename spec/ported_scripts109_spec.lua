-- ported_scripts109_spec.lua — vsitzmann/siren: explore_siren.ipynb's get_mgrid, SineLayer
-- (is_first / omega_0 and its uniform init bounds) and Siren (outermost_linear), which
-- modules.py's plain path matches (its BatchLinear / MetaModule parts are left out: the plain
-- path needs none), diff_operators.py (gradient with autograd.grad(create_graph=True),
-- divergence, laplace: the divergence of the gradient, a second-order graph; jacobian),
-- dataio.py's get_mgrid (the numpy form), and loss_functions.py's image_mse, gradients_mse and
-- laplace_mse (the notebook's Poisson fits: the gradient and the laplacian of an image), ported
-- line for line at tiny sizes (in_features 2, hidden 8, 2 hidden layers, out 1, a 6 x 6 grid)
-- on made-up targets. The Python line stands above each Lua line that differs from it.
-- Dims are 1-based: y[..., i] is y:select(-1, i) with i from 1.
local tide = require("tide")
local nn = tide.nn
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

---------------------------------------------------------------------------------------------
-- 1. explore_siren.ipynb / dataio.py: get_mgrid
---------------------------------------------------------------------------------------------
-- def get_mgrid(sidelen, dim=2):  (the notebook's)
local function get_mgrid(sidelen, dim)
    dim = dim or 2
    -- tensors = tuple(dim * [torch.linspace(-1, 1, steps=sidelen)])
    local tensors = {}
    for i = 1, dim do tensors[i] = tide.linspace(-1, 1, { steps = sidelen }) end
    -- mgrid = torch.stack(torch.meshgrid(*tensors), dim=-1)
    local mgrid = tide.stack(tide.meshgrid(unpack(tensors)), -1)
    -- mgrid = mgrid.reshape(-1, dim)
    mgrid = mgrid:reshape(-1, dim)
    return mgrid
end

-- def get_mgrid(sidelen, dim=2):  (dataio.py's; dim 2 only here)
local function get_mgrid_dataio(sidelen, dim)
    dim = dim or 2
    -- if isinstance(sidelen, int): sidelen = dim * (sidelen,)
    if type(sidelen) == "number" then sidelen = { sidelen, sidelen } end
    assert(dim == 2, "Not implemented for dim=" .. dim)
    -- pixel_coords = np.stack(np.mgrid[:sidelen[0], :sidelen[1]], axis=-1)[None, ...]
    --     .astype(np.float32)
    local pixel_coords = tide.stack(tide.meshgrid(tide.arange(0, sidelen[1]):float(),
        tide.arange(0, sidelen[2]):float(), { indexing = "ij" }), -1):unsqueeze(1)
    -- pixel_coords[0, :, :, 0] = pixel_coords[0, :, :, 0] / (sidelen[0] - 1)
    pixel_coords[{ 1, {}, {}, 1 }] = pixel_coords[{ 1, {}, {}, 1 }] / (sidelen[1] - 1)
    -- pixel_coords[0, :, :, 1] = pixel_coords[0, :, :, 1] / (sidelen[1] - 1)
    pixel_coords[{ 1, {}, {}, 2 }] = pixel_coords[{ 1, {}, {}, 2 }] / (sidelen[2] - 1)
    -- pixel_coords -= 0.5
    pixel_coords:sub_(0.5)
    -- pixel_coords *= 2.
    pixel_coords:mul_(2.)
    -- pixel_coords = torch.Tensor(pixel_coords).view(-1, dim)
    pixel_coords = pixel_coords:view(-1, dim)
    return pixel_coords
end

---------------------------------------------------------------------------------------------
-- 2. explore_siren.ipynb: SineLayer, Siren
---------------------------------------------------------------------------------------------
-- class SineLayer(nn.Module):
local SineLayer = nn.Module:extend("SineLayer")
-- def __init__(self, in_features, out_features, bias=True, is_first=False, omega_0=30):
function SineLayer:init(in_features, out_features, bias, is_first, omega_0)
    if bias == nil then bias = true end
    self.omega_0 = omega_0 or 30
    self.is_first = is_first or false

    self.in_features = in_features
    -- self.linear = nn.Linear(in_features, out_features, bias=bias)
    self.linear = nn.Linear(in_features, out_features, { bias = bias })

    self:init_weights()
end

function SineLayer:init_weights()
    -- with torch.no_grad():
    tide.no_grad(function()
        if self.is_first then
            -- self.linear.weight.uniform_(-1 / self.in_features, 1 / self.in_features)
            self.linear.weight:uniform_(-1 / self.in_features, 1 / self.in_features)
        else
            -- self.linear.weight.uniform_(-np.sqrt(6 / self.in_features) / self.omega_0,
            --                              np.sqrt(6 / self.in_features) / self.omega_0)
            self.linear.weight:uniform_(-math.sqrt(6 / self.in_features) / self.omega_0,
                math.sqrt(6 / self.in_features) / self.omega_0)
        end
    end)
end

function SineLayer:forward(input)
    -- return torch.sin(self.omega_0 * self.linear(input))
    return tide.sin(self.omega_0 * self.linear(input))
end

-- class Siren(nn.Module):
local Siren = nn.Module:extend("Siren")
-- def __init__(self, in_features, hidden_features, hidden_layers, out_features,
--              outermost_linear=False, first_omega_0=30, hidden_omega_0=30.):
function Siren:init(in_features, hidden_features, hidden_layers, out_features, outermost_linear,
                    first_omega_0, hidden_omega_0)
    first_omega_0, hidden_omega_0 = first_omega_0 or 30, hidden_omega_0 or 30.
    -- self.net = []
    local net = {}
    -- self.net.append(SineLayer(in_features, hidden_features, is_first=True,
    --                           omega_0=first_omega_0))
    net[#net + 1] = SineLayer(in_features, hidden_features, true, true, first_omega_0)

    -- for i in range(hidden_layers):
    for _ = 1, hidden_layers do
        net[#net + 1] = SineLayer(hidden_features, hidden_features, true, false, hidden_omega_0)
    end

    if outermost_linear then
        local final_linear = nn.Linear(hidden_features, out_features)

        tide.no_grad(function()
            -- final_linear.weight.uniform_(-np.sqrt(6 / hidden_features) / hidden_omega_0,
            --                               np.sqrt(6 / hidden_features) / hidden_omega_0)
            final_linear.weight:uniform_(-math.sqrt(6 / hidden_features) / hidden_omega_0,
                math.sqrt(6 / hidden_features) / hidden_omega_0)
        end)

        net[#net + 1] = final_linear
    else
        net[#net + 1] = SineLayer(hidden_features, out_features, true, false, hidden_omega_0)
    end

    -- self.net = nn.Sequential(*self.net)
    self.net = nn.Sequential(unpack(net))
end

function Siren:forward(coords)
    -- coords = coords.clone().detach().requires_grad_(True)
    -- (allows to take derivative w.r.t. input)
    coords = coords:clone():detach():requires_grad_(true)
    local output = self.net(coords)
    return output, coords
end

---------------------------------------------------------------------------------------------
-- 3. diff_operators.py
---------------------------------------------------------------------------------------------
local gradient, divergence

-- def laplace(y, x):
local function laplace(y, x)
    local grad = gradient(y, x)
    return divergence(grad, x)
end

-- def divergence(y, x):
function divergence(y, x)
    -- div = 0.
    local div = 0.
    -- for i in range(y.shape[-1]):
    for i = 1, y.shape[-1] do
        -- div += grad(y[..., i], x, torch.ones_like(y[..., i]), create_graph=True)[0][..., i:i+1]
        div = div + tide.autograd.grad(y:select(-1, i), x, tide.ones_like(y:select(-1, i)),
            { create_graph = true })[1]:narrow(-1, i, 1)
    end
    return div
end

-- def gradient(y, x, grad_outputs=None):
function gradient(y, x, grad_outputs)
    if grad_outputs == nil then
        grad_outputs = tide.ones_like(y)
    end
    -- grad = torch.autograd.grad(y, [x], grad_outputs=grad_outputs, create_graph=True)[0]
    local grad = tide.autograd.grad(y, { x }, { grad_outputs = grad_outputs,
        create_graph = true })[1]
    return grad
end

-- def jacobian(y, x):
local function jacobian(y, x)
    -- meta_batch_size, num_observations = y.shape[:2]
    local meta_batch_size, num_observations = y.shape[1], y.shape[2]
    -- jac = torch.zeros(meta_batch_size, num_observations, y.shape[-1], x.shape[-1])
    --     .to(y.device)
    local jac = tide.zeros(meta_batch_size, num_observations, y.shape[-1], x.shape[-1])
        :to(y.device)
    -- for i in range(y.shape[-1]):
    for i = 1, y.shape[-1] do
        -- y_flat = y[...,i].view(-1, 1)
        local y_flat = y:select(-1, i):view(-1, 1)
        -- jac[:, :, i, :] = grad(y_flat, x, torch.ones_like(y_flat), create_graph=True)[0]
        jac[{ {}, {}, i, {} }] = tide.autograd.grad(y_flat, x, tide.ones_like(y_flat),
            { create_graph = true })[1]
    end

    local status = 0
    -- if torch.any(torch.isnan(jac)):
    if tide.any(tide.isnan(jac)):item() then
        status = -1
    end

    return jac, status
end

---------------------------------------------------------------------------------------------
-- 4. loss_functions.py (model_output / gt dicts as Lua tables)
---------------------------------------------------------------------------------------------
-- def image_mse(mask, model_output, gt):
local function image_mse(mask, model_output, gt)
    if mask == nil then
        -- return {'img_loss': ((model_output['model_out'] - gt['img']) ** 2).mean()}
        return { img_loss = ((model_output.model_out - gt.img) ^ 2):mean() }
    else
        return { img_loss = (mask * (model_output.model_out - gt.img) ^ 2):mean() }
    end
end

-- def gradients_mse(model_output, gt):
local function gradients_mse(model_output, gt)
    -- compute gradients on the model
    local gradients = gradient(model_output.model_out, model_output.model_in)
    -- compare them with the ground-truth
    -- gradients_loss = torch.mean((gradients - gt['gradients']).pow(2).sum(-1))
    local gradients_loss = tide.mean((gradients - gt.gradients):pow(2):sum(-1))
    return { gradients_loss = gradients_loss }
end

-- def laplace_mse(model_output, gt):
local function laplace_mse(model_output, gt)
    -- compute laplacian on the model
    local lap = laplace(model_output.model_out, model_output.model_in)
    -- compare them with the ground truth
    -- laplace_loss = torch.mean((laplace - gt['laplace']) ** 2)
    local laplace_loss = tide.mean((lap - gt.laplace) ^ 2)
    return { laplace_loss = laplace_loss }
end

---------------------------------------------------------------------------------------------
-- the checks (values from PyTorch 1.13 on the same weights and targets)
---------------------------------------------------------------------------------------------
-- for i, (n, p) in enumerate(model.named_parameters()):
--     p.copy_((torch.sin(torch.arange(p.numel()) * 0.37 + i) * 0.05).reshape(p.shape))
local function det_init(model)
    tide.no_grad(function()
        for i, np_ in ipairs(model:named_parameters()) do
            local p = np_[2]
            p:copy_((tide.sin(tide.arange(0, p:numel()) * 0.37 + (i - 1)) * 0.05)
                :reshape(p.shape))
        end
    end)
end

local N = 36
-- k = torch.arange(36.); img = (torch.sin(k * 0.5) * 0.5).reshape(1, 36, 1)
-- grads = torch.stack((torch.cos(k * 0.3), torch.sin(k * 0.7)), -1).reshape(1, 36, 2)
-- lap = (torch.cos(k * 0.9) * 2).reshape(1, 36, 1)
local function targets()
    local k = tide.arange(0, N):float()
    return {
        img = (tide.sin(k * 0.5) * 0.5):reshape(1, N, 1),
        gradients = tide.stack({ tide.cos(k * 0.3), tide.sin(k * 0.7) }, -1):reshape(1, N, 2),
        laplace = (tide.cos(k * 0.9) * 2):reshape(1, N, 1),
    }
end

local function list(t) return t:detach():reshape(-1):totable() end
-- the values at grid points 0, 7, 20, 35 (Python's indices)
local PTS = tide.tensor({ 1, 8, 21, 36 }, { dtype = "int64" })

local function build(outermost_linear)
    -- m = Siren(2, 8, 2, 1, outermost_linear=...); det_init(m)
    local m = Siren(2, 8, 2, 1, outermost_linear)
    det_init(m)
    return m
end

describe("ported vsitzmann/siren (notebook, diff_operators.py, loss_functions.py)", function()
    it("get_mgrid: the notebook's and dataio.py's 6 x 6 grids, PyTorch's values", function()
        local mg = get_mgrid(6, 2)
        assert.are.same({ 36, 2 }, mg:size())
        assert_close_list({ -1.0, -1.0, -1.0, -0.600000024, -1.0, -0.199999988, -1.0,
            0.199999988, -1.0, 0.600000024, -1.0, 1.0, -0.600000024, -1.0, -0.600000024,
            -0.600000024 }, list(mg:narrow(1, 1, 8)), 1e-6, "mgrid")
        assert.is_true(math.abs(mg:sum():item()) < 1e-5)
        -- (mg * torch.arange(72.).view(36, 2)).sum()
        assert.is_true(ported.close((mg * tide.arange(0, 72):float():view(36, 2)):sum():item(),
            588.0, 1e-5))
        local md = get_mgrid_dataio(6, 2)
        assert.are.same({ 36, 2 }, md:size())
        -- PyTorch: at most 6e-8 apart (linspace against k / 5 * 2 - 1)
        assert.is_true((md - mg):abs():max():item() < 1e-6)
    end)

    it("Siren: the modules, parameter names and SineLayer's uniform init bounds", function()
        local m = Siren(2, 8, 2, 1, true)
        local names = {}
        for _, np_ in ipairs(m:named_parameters()) do names[#names + 1] = np_[1] end
        -- PyTorch's net.0.linear.weight ... net.3.bias: tide's Sequential names its layers
        -- by their 1-based positions
        assert.are.same({ "net.1.linear.weight", "net.1.linear.bias", "net.2.linear.weight",
            "net.2.linear.bias", "net.3.linear.weight", "net.3.linear.bias", "net.4.weight",
            "net.4.bias" }, names)
        local bound = math.sqrt(6 / 8) / 30
        local w0, w1, w3 = m.net[1].linear.weight, m.net[2].linear.weight, m.net[4].weight
        assert.is_true(w0:abs():max():item() <= 0.5 and w0:abs():max():item() > 0.05)
        for _, w in ipairs({ w1, w3 }) do
            assert.is_true(w:abs():max():item() <= bound + 1e-7)
            assert.is_true(w:abs():max():item() > bound / 4)
        end
        local m2 = Siren(2, 8, 2, 1, false)
        assert.are.same("net.4.linear.weight", m2:named_parameters()[7][1])
        assert.is_true(m2.net[4].linear.weight:abs():max():item() <= bound + 1e-7)
        assert.are.equal(30, m2.net[4].omega_0)
        assert.is_true(m2.net[1].is_first and not m2.net[2].is_first)
    end)

    -- PyTorch's outputs, gradient, laplacian and jacobians, outermost_linear true and false
    local WANT = {
        [true] = {
            out = { 0.052180719, -0.029740836, 0.150263056, 0.049237784 },
            out_sum = 1.407059907913208, out_sq = 0.27052101492881775,
            grad = { -1.043751597, -1.089922667, 1.634276152, 1.557817221, -0.181938738,
                -0.187175214, -1.392076373, -1.430793881 },
            grad_sum = -12.906699180603027, grad_sq = 103.36054229736328,
            lap = { -12.903885841, 49.875488281, -0.179075599, -29.021160126 },
            lap_sum = -273.12188720703125, lap_sq = 103195.2265625,
            jac2_7 = { 25.737747192, 25.009677887, 25.009679794, 24.137742996 },
            jac2_sum = -544.0551147460938,
        },
        [false] = {
            out = { 0.999985576, -0.778470337, -0.97916317, 0.995616853 },
            out_sum = -11.641879081726074, out_sq = 23.039663314819336,
            grad = { -0.168296158, -0.175740838, 30.774148941, 29.33439064, 1.108416319,
                1.140318155, -3.905857086, -4.014490128 },
            grad_sum = 470.63671875, grad_sq = 30320.935546875,
            lap = { -2051.664550781, 4510.711914062, 61.135837555, -3652.249511719 },
            lap_sum = 6955.94873046875, lap_sq = 465640640.0,
            jac2_7 = { 2355.918945312, 2254.662597656, 2254.663085938, 2154.793212891 },
            jac2_sum = 13541.7353515625,
        },
    }
    for _, outer in ipairs({ true, false }) do
        it("diff_operators: gradient, laplace, divergence, jacobian (outermost_linear=" ..
            tostring(outer) .. ")", function()
            local w = WANT[outer]
            local m = build(outer)
            local out, coords = m(get_mgrid(6, 2):unsqueeze(1))
            assert.are.same({ 1, 36, 1 }, out:size())
            assert_close_list(w.out, list(out:view(-1):index_select(1, PTS)), 1e-4, "out")
            assert_close_list({ w.out_sum, w.out_sq },
                { out:sum():item(), (out ^ 2):sum():item() }, 1e-4, "out sums")
            local g = gradient(out, coords)
            assert.are.same({ 1, 36, 2 }, g:size())
            assert.is_true(g.requires_grad)
            assert_close_list(w.grad, list(g:select(1, 1):index_select(1, PTS)), 1e-4, "grad")
            assert_close_list({ w.grad_sum, w.grad_sq },
                { g:sum():item(), (g ^ 2):sum():item() }, 1e-4, "grad sums")
            local L = laplace(out, coords)
            assert.are.same({ 1, 36, 1 }, L:size())
            assert_close_list(w.lap, list(L:view(-1):index_select(1, PTS)), 1e-4, "laplace")
            assert_close_list({ w.lap_sum, w.lap_sq },
                { L:sum():item(), (L ^ 2):sum():item() }, 1e-4, "laplace sums")
            -- divergence(gradient(y, x), x) is laplace: the same values
            assert.are.equal(0, (divergence(g, coords) - L):abs():max():item())
            local J, status = jacobian(out, coords)
            assert.are.same({ 1, 36, 1, 2 }, J:size())
            assert.are.equal(0, status)
            assert.are.equal(0, (J:view(1, N, 2) - g):abs():max():item())
            -- the jacobian of the gradient field: the Hessian, through jac's CopySlices
            local J2, status2 = jacobian(g, coords)
            assert.are.same({ 1, 36, 2, 2 }, J2:size())
            assert.are.equal(0, status2)
            assert_close_list(w.jac2_7, list(J2[{ 1, 8 }]), 1e-4, "hessian at point 7")
            assert.is_true(ported.close(J2:sum():item(), w.jac2_sum, 1e-4))
            -- J2 is recorded (create_graph): a third derivative reaches the weights
            J2:sum():backward()
            assert.is_true(m.net[1].linear.weight.grad:abs():sum():item() > 0)
        end)
    end

    -- PyTorch's losses at steps 0, 1 and after the two Adam steps, and some weights after
    local TRAIN = {
        img = { losses = { 0.13372278213500977, 0.12063244730234146, 0.12089400738477707 },
            w0 = { 0.001788952, 0.020078385, 0.035589229, 0.046621509 },
            w1 = { 0.044578232, -0.038941257, 0.006894147 },
            w3 = { -0.015963888, 0.002435486, 0.023913726 }, b3 = { 0.031076876 },
            sum = 0.1087301317602396 },
        grad = { losses = { 3.719822406768799, 3.1099066734313965, 2.1301162242889404 },
            w0 = { 0.001833874, 0.016264286, 0.031806108, 0.042947318 },
            w1 = { 0.046988647, -0.038790535, 0.006819535 },
            w3 = { -0.015902355, 0.002350323, 0.02058441 }, b3 = { 0.03284933 },
            sum = 0.07704193890094757 },
        lap = { losses = { 2887.024658203125, 1523.5858154296875, 747.819580078125 },
            w0 = { -0.001837442, 0.019513683, 0.035482399, 0.046343613 },
            w1 = { 0.044657566, -0.042546306, 0.006815488 },
            w3 = { -0.015961939, 0.002483376, 0.022817837 }, b3 = { 0.03284933 },
            sum = 0.032548122107982635 },
    }
    local function loss_of(which, m, input, gt)
        -- model_output, coords = siren(model_input)
        local model_output, coords = m(input)
        local mo = { model_in = coords, model_out = model_output }
        if which == "img" then return image_mse(nil, mo, gt).img_loss end
        if which == "grad" then return gradients_mse(mo, gt).gradients_loss end
        return laplace_mse(mo, gt).laplace_loss
    end
    for _, which in ipairs({ "img", "grad", "lap" }) do
        it("2 Adam steps on " .. which .. " loss (" .. (which == "img" and "image_mse" or
            which == "grad" and "gradients_mse, double backward" or
            "laplace_mse, third-order backward") .. "): PyTorch's losses and weights", function()
            local want = TRAIN[which]
            local m = build(true)
            local model_input, gt = get_mgrid(6, 2):unsqueeze(1), targets()
            -- optim = torch.optim.Adam(lr=1e-3, params=siren.parameters())
            local optim = tide.optim.Adam({ lr = 1e-3, params = m:parameters() })
            local losses = {}
            for step = 1, 2 do
                local loss = loss_of(which, m, model_input, gt)
                losses[step] = loss:item()
                assert_finite(losses[step], which .. " loss")
                optim:zero_grad()
                loss:backward()
                if which ~= "img" then
                    -- the last bias leaves the gradient of the output: no grad (None in
                    -- PyTorch), and Adam skips it
                    assert.is_nil(m.net[4].bias.grad)
                end
                optim:step()
            end
            losses[3] = loss_of(which, m, model_input, gt):item()
            assert_close_list(want.losses, losses, 2e-4, which .. " losses")
            assert.is_true(losses[2] < losses[1])
            local w0 = m.net[1].linear.weight:view(-1):narrow(1, 1, 4)
            assert_close_list(want.w0, list(w0), 2e-4, "net.0 weight")
            local w1 = m.net[2].linear.weight:view(-1):index_select(1,
                tide.tensor({ 1, 10, 64 }, { dtype = "int64" }))
            assert_close_list(want.w1, list(w1), 2e-4, "net.1 weight")
            assert_close_list(want.w3, list(m.net[4].weight:view(-1):narrow(1, 1, 3)), 2e-4,
                "net.3 weight")
            assert_close_list(want.b3, list(m.net[4].bias), 2e-4, "net.3 bias")
            local s = 0
            for _, p in ipairs(m:parameters()) do s = s + p:sum():item() end
            assert.is_true(math.abs(s - want.sum) < 1e-4)
        end)
    end
end)
