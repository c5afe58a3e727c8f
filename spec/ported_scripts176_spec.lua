-- ported_scripts176_spec.lua — NVlabs/edm: training/networks.py (VPPrecond with sigma /
-- sigma_inv / round_sigma, VEPrecond, EDMPrecond: c_skip, c_out, c_in, c_noise, the F_x call
-- with class_labels None, the dtype choice with force_fp32), training/loss.py (VPLoss, VELoss,
-- EDMLoss, the augment_pipe None path) and generate.py (edm_sampler: the rho time-step
-- discretization, round_sigma, S_churn / S_min / S_max / S_noise, the Heun correction, the last
-- Euler step), ported line for line at tiny sizes (images 2 x 3 x 4 x 4). The Python line stands
-- above each Lua line that differs from it. The U-Net is replaced by a tiny model (a 3x3 Conv2d
-- 3 -> 3 plus c_noise times a fixed vector, called as model(x, noise_labels, class_labels));
-- weights, inputs and the torch.rand / torch.randn / randn_like draws are fixed tensors (sin of
-- an arange), the same in the PyTorch 1.13 script that gave the reference values.
-- iDDPMPrecond and ablation_sampler are not ported.
local tide = require("tide")
local nn = tide.nn

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list
local close = ported.close

-- fixed(shape, a): sin(arange(n) * a) computed in float64, reshaped, in dtype (default float32)
local function fixed(shape, a, dtype)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    local t = (tide.arange(0, n, { dtype = "float64" }) * a):sin()
    return t:reshape(shape):to(dtype or "float32")
end

local function list(t)
    return t:detach():double():flatten():tolist()
end

-- the tiny stand-in for SongUNet / DhariwalUNet
local Tiny = nn.Module:extend("Tiny")
function Tiny:init()
    self.conv = nn.Conv2d(3, 3, 3, { padding = 1 })
    tide.no_grad(function()
        self.conv.weight:copy_(fixed({ 3, 3, 3, 3 }, 0.37) * 0.2)
        self.conv.bias:copy_(fixed({ 3 }, 1.1) * 0.1)
    end)
    self:register_buffer("v", tide.tensor({ 0.1, -0.2, 0.3 }))
end
-- def forward(self, x, noise_labels, class_labels=None):
function Tiny:forward(x, noise_labels, class_labels) -- luacheck: ignore class_labels
    return self.conv(x) + noise_labels:reshape(-1, 1, 1, 1) * self.v:reshape(1, -1, 1, 1)
end

-- the dtype choice every preconditioner makes (tide's float16 runs on CPU too; edm keeps it
-- to CUDA, so on CPU the model runs in float32 as in PyTorch)
local function model_dtype(self, x, force_fp32)
    -- dtype = torch.float16 if (self.use_fp16 and not force_fp32 and x.device.type == 'cuda')
    --     else torch.float32
    return (self.use_fp16 and not force_fp32 and x.device.type == "cuda") and "float16"
        or "float32"
end

---------------------------------------------------------------------------------------------
-- 1. training/networks.py
---------------------------------------------------------------------------------------------
-- class VPPrecond(torch.nn.Module):
local VPPrecond = nn.Module:extend("VPPrecond")
-- def __init__(self, img_resolution, img_channels, label_dim=0, use_fp16=False, beta_d=19.9,
--     beta_min=0.1, M=1000, epsilon_t=1e-5, model_type='SongUNet', **model_kwargs):
function VPPrecond:init(img_resolution, img_channels, opts)
    opts = opts or {}
    self.img_resolution = img_resolution
    self.img_channels = img_channels
    self.label_dim = opts.label_dim or 0
    self.use_fp16 = opts.use_fp16 or false
    self.beta_d = opts.beta_d or 19.9
    self.beta_min = opts.beta_min or 0.1
    self.M = opts.M or 1000
    self.epsilon_t = opts.epsilon_t or 1e-5
    -- self.sigma_min = float(self.sigma(epsilon_t))
    self.sigma_min = self:sigma(self.epsilon_t):item()
    self.sigma_max = self:sigma(1):item()
    -- self.model = globals()[model_type](img_resolution=..., in_channels=..., ...)
    self.model = Tiny()
end

-- def forward(self, x, sigma, class_labels=None, force_fp32=False, **model_kwargs):
function VPPrecond:forward(x, sigma, class_labels, force_fp32)
    x = x:to("float32")
    sigma = sigma:to("float32"):reshape(-1, 1, 1, 1)
    -- class_labels = None if self.label_dim == 0 else ...
    assert(self.label_dim == 0 and class_labels == nil)
    local dtype = model_dtype(self, x, force_fp32)

    local c_skip = 1
    local c_out = -sigma
    -- c_in = 1 / (sigma ** 2 + 1).sqrt()
    local c_in = 1 / (sigma ^ 2 + 1):sqrt()
    local c_noise = (self.M - 1) * self:sigma_inv(sigma)

    -- F_x = self.model((c_in * x).to(dtype), c_noise.flatten(), class_labels=class_labels)
    local F_x = self.model((c_in * x):to(dtype), c_noise:flatten(), class_labels)
    assert(F_x.dtype == dtype)
    -- D_x = c_skip * x + c_out * F_x.to(torch.float32)
    local D_x = c_skip * x + c_out * F_x:to("float32")
    return D_x
end

-- def sigma(self, t):
function VPPrecond:sigma(t)
    t = tide.as_tensor(t)
    -- return ((0.5 * self.beta_d * (t ** 2) + self.beta_min * t).exp() - 1).sqrt()
    return ((0.5 * self.beta_d * (t ^ 2) + self.beta_min * t):exp() - 1):sqrt()
end

-- def sigma_inv(self, sigma):
function VPPrecond:sigma_inv(sigma)
    sigma = tide.as_tensor(sigma)
    -- return ((self.beta_min ** 2 + 2 * self.beta_d * (1 + sigma ** 2).log()).sqrt()
    --     - self.beta_min) / self.beta_d
    return ((self.beta_min ^ 2 + 2 * self.beta_d * (1 + sigma ^ 2):log()):sqrt()
        - self.beta_min) / self.beta_d
end

function VPPrecond:round_sigma(sigma)
    return tide.as_tensor(sigma)
end

-- class VEPrecond(torch.nn.Module):
local VEPrecond = nn.Module:extend("VEPrecond")
-- def __init__(self, img_resolution, img_channels, label_dim=0, use_fp16=False, sigma_min=0.02,
--     sigma_max=100, model_type='SongUNet', **model_kwargs):
function VEPrecond:init(img_resolution, img_channels, opts)
    opts = opts or {}
    self.img_resolution = img_resolution
    self.img_channels = img_channels
    self.label_dim = opts.label_dim or 0
    self.use_fp16 = opts.use_fp16 or false
    self.sigma_min = opts.sigma_min or 0.02
    self.sigma_max = opts.sigma_max or 100
    self.model = Tiny()
end

function VEPrecond:forward(x, sigma, class_labels, force_fp32)
    x = x:to("float32")
    sigma = sigma:to("float32"):reshape(-1, 1, 1, 1)
    assert(self.label_dim == 0 and class_labels == nil)
    local dtype = model_dtype(self, x, force_fp32)

    local c_skip = 1
    local c_out = sigma
    local c_in = 1
    -- c_noise = (0.5 * sigma).log()
    local c_noise = (0.5 * sigma):log()

    local F_x = self.model((c_in * x):to(dtype), c_noise:flatten(), class_labels)
    assert(F_x.dtype == dtype)
    local D_x = c_skip * x + c_out * F_x:to("float32")
    return D_x
end

function VEPrecond:round_sigma(sigma)
    return tide.as_tensor(sigma)
end

-- class EDMPrecond(torch.nn.Module):
local EDMPrecond = nn.Module:extend("EDMPrecond")
-- def __init__(self, img_resolution, img_channels, label_dim=0, use_fp16=False, sigma_min=0,
--     sigma_max=float('inf'), sigma_data=0.5, model_type='DhariwalUNet', **model_kwargs):
function EDMPrecond:init(img_resolution, img_channels, opts)
    opts = opts or {}
    self.img_resolution = img_resolution
    self.img_channels = img_channels
    self.label_dim = opts.label_dim or 0
    self.use_fp16 = opts.use_fp16 or false
    self.sigma_min = opts.sigma_min or 0
    -- sigma_max = float('inf')
    self.sigma_max = opts.sigma_max or math.huge
    self.sigma_data = opts.sigma_data or 0.5
    self.model = Tiny()
end

function EDMPrecond:forward(x, sigma, class_labels, force_fp32)
    x = x:to("float32")
    sigma = sigma:to("float32"):reshape(-1, 1, 1, 1)
    assert(self.label_dim == 0 and class_labels == nil)
    local dtype = model_dtype(self, x, force_fp32)

    -- c_skip = self.sigma_data ** 2 / (sigma ** 2 + self.sigma_data ** 2)
    local c_skip = self.sigma_data ^ 2 / (sigma ^ 2 + self.sigma_data ^ 2)
    -- c_out = sigma * self.sigma_data / (sigma ** 2 + self.sigma_data ** 2).sqrt()
    local c_out = sigma * self.sigma_data / (sigma ^ 2 + self.sigma_data ^ 2):sqrt()
    -- c_in = 1 / (self.sigma_data ** 2 + sigma ** 2).sqrt()
    local c_in = 1 / (self.sigma_data ^ 2 + sigma ^ 2):sqrt()
    -- c_noise = sigma.log() / 4
    local c_noise = sigma:log() / 4

    local F_x = self.model((c_in * x):to(dtype), c_noise:flatten(), class_labels)
    assert(F_x.dtype == dtype)
    local D_x = c_skip * x + c_out * F_x:to("float32")
    return D_x
end

function EDMPrecond:round_sigma(sigma)
    return tide.as_tensor(sigma)
end

---------------------------------------------------------------------------------------------
-- 2. training/loss.py (the draws are fixed: RND_UNIFORM, RND_NORMAL, NOISE)
---------------------------------------------------------------------------------------------
local RND_UNIFORM = tide.tensor({ 0.25, 0.7 }):reshape(2, 1, 1, 1)
local RND_NORMAL = tide.tensor({ -0.4, 0.9 }):reshape(2, 1, 1, 1)
local NOISE = fixed({ 2, 3, 4, 4 }, 0.91)

-- class VPLoss:
local VPLoss = ported.class("VPLoss")
-- def __init__(self, beta_d=19.9, beta_min=0.1, epsilon_t=1e-5):
function VPLoss:__init__(beta_d, beta_min, epsilon_t)
    self.beta_d = beta_d or 19.9
    self.beta_min = beta_min or 0.1
    self.epsilon_t = epsilon_t or 1e-5
end

-- def __call__(self, net, images, labels, augment_pipe=None):
function VPLoss:__call__(net, images, labels, augment_pipe)
    -- rnd_uniform = torch.rand([images.shape[0], 1, 1, 1], device=images.device)
    local rnd_uniform = RND_UNIFORM
    local sigma = self:sigma(1 + rnd_uniform * (self.epsilon_t - 1))
    local weight = 1 / sigma ^ 2
    -- y, augment_labels = augment_pipe(images) if augment_pipe is not None else (images, None)
    local y, augment_labels
    if augment_pipe ~= nil then y, augment_labels = augment_pipe(images) else y = images end
    -- n = torch.randn_like(y) * sigma
    local n = NOISE * sigma
    -- D_yn = net(y + n, sigma, labels, augment_labels=augment_labels)
    assert(augment_labels == nil)
    local D_yn = net(y + n, sigma, labels)
    local loss = weight * ((D_yn - y) ^ 2)
    return loss
end

function VPLoss:sigma(t)
    t = tide.as_tensor(t)
    return ((0.5 * self.beta_d * (t ^ 2) + self.beta_min * t):exp() - 1):sqrt()
end

-- class VELoss:
local VELoss = ported.class("VELoss")
function VELoss:__init__(sigma_min, sigma_max)
    self.sigma_min = sigma_min or 0.02
    self.sigma_max = sigma_max or 100
end

function VELoss:__call__(net, images, labels, augment_pipe)
    local rnd_uniform = RND_UNIFORM
    -- sigma = self.sigma_min * ((self.sigma_max / self.sigma_min) ** rnd_uniform)
    local sigma = self.sigma_min * ((self.sigma_max / self.sigma_min) ^ rnd_uniform)
    local weight = 1 / sigma ^ 2
    local y, augment_labels
    if augment_pipe ~= nil then y, augment_labels = augment_pipe(images) else y = images end
    local n = NOISE * sigma
    assert(augment_labels == nil)
    local D_yn = net(y + n, sigma, labels)
    local loss = weight * ((D_yn - y) ^ 2)
    return loss
end

-- class EDMLoss:
local EDMLoss = ported.class("EDMLoss")
-- def __init__(self, P_mean=-1.2, P_std=1.2, sigma_data=0.5):
function EDMLoss:__init__(P_mean, P_std, sigma_data)
    self.P_mean = P_mean or -1.2
    self.P_std = P_std or 1.2
    self.sigma_data = sigma_data or 0.5
end

function EDMLoss:__call__(net, images, labels, augment_pipe)
    -- rnd_normal = torch.randn([images.shape[0], 1, 1, 1], device=images.device)
    local rnd_normal = RND_NORMAL
    -- sigma = (rnd_normal * self.P_std + self.P_mean).exp()
    local sigma = (rnd_normal * self.P_std + self.P_mean):exp()
    -- weight = (sigma ** 2 + self.sigma_data ** 2) / (sigma * self.sigma_data) ** 2
    local weight = (sigma ^ 2 + self.sigma_data ^ 2) / (sigma * self.sigma_data) ^ 2
    local y, augment_labels
    if augment_pipe ~= nil then y, augment_labels = augment_pipe(images) else y = images end
    local n = NOISE * sigma
    assert(augment_labels == nil)
    local D_yn = net(y + n, sigma, labels)
    local loss = weight * ((D_yn - y) ^ 2)
    return loss
end

---------------------------------------------------------------------------------------------
-- 3. generate.py edm_sampler (randn_like is passed in: a fixed tensor)
---------------------------------------------------------------------------------------------
-- def edm_sampler(net, latents, class_labels=None, randn_like=torch.randn_like, num_steps=18,
--     sigma_min=0.002, sigma_max=80, rho=7, S_churn=0, S_min=0, S_max=float('inf'), S_noise=1):
local function edm_sampler(net, latents, class_labels, o)
    o = o or {}
    local randn_like = o.randn_like or tide.randn_like
    local num_steps, sigma_min, sigma_max = o.num_steps or 18, o.sigma_min or 0.002,
        o.sigma_max or 80
    local rho, S_churn, S_min = o.rho or 7, o.S_churn or 0, o.S_min or 0
    local S_max, S_noise = o.S_max or math.huge, o.S_noise or 1
    -- Adjust noise levels based on what's supported by the network.
    sigma_min = math.max(sigma_min, net.sigma_min)
    sigma_max = math.min(sigma_max, net.sigma_max)

    -- Time step discretization.
    -- step_indices = torch.arange(num_steps, dtype=torch.float64, device=latents.device)
    local step_indices = tide.arange(0, num_steps, { dtype = "float64", device = latents.device })
    -- t_steps = (sigma_max ** (1 / rho) + step_indices / (num_steps - 1)
    --     * (sigma_min ** (1 / rho) - sigma_max ** (1 / rho))) ** rho
    local t_steps = (sigma_max ^ (1 / rho) + step_indices / (num_steps - 1)
        * (sigma_min ^ (1 / rho) - sigma_max ^ (1 / rho))) ^ rho
    -- t_steps = torch.cat([net.round_sigma(t_steps), torch.zeros_like(t_steps[:1])]) # t_N = 0
    t_steps = tide.cat({ net:round_sigma(t_steps), tide.zeros_like(t_steps:narrow(1, 1, 1)) })

    -- Main sampling loop.
    -- x_next = latents.to(torch.float64) * t_steps[0]
    local x_next = latents:to("float64") * t_steps[1]
    -- for i, (t_cur, t_next) in enumerate(zip(t_steps[:-1], t_steps[1:])): # 0, ..., N-1
    for i = 0, num_steps - 1 do
        local t_cur, t_next = t_steps[i + 1], t_steps[i + 2]
        local x_cur = x_next

        -- Increase noise temporarily.
        -- gamma = min(S_churn / num_steps, np.sqrt(2) - 1) if S_min <= t_cur <= S_max else 0
        local tc = t_cur:item()
        local gamma = (S_min <= tc and tc <= S_max) and math.min(S_churn / num_steps,
            math.sqrt(2) - 1) or 0
        local t_hat = net:round_sigma(t_cur + gamma * t_cur)
        -- x_hat = x_cur + (t_hat ** 2 - t_cur ** 2).sqrt() * S_noise * randn_like(x_cur)
        local x_hat = x_cur + (t_hat ^ 2 - t_cur ^ 2):sqrt() * S_noise * randn_like(x_cur)

        -- Euler step.
        -- denoised = net(x_hat, t_hat, class_labels).to(torch.float64)
        local denoised = net(x_hat, t_hat, class_labels):to("float64")
        local d_cur = (x_hat - denoised) / t_hat
        x_next = x_hat + (t_next - t_hat) * d_cur

        -- Apply 2nd order correction.
        if i < num_steps - 1 then
            denoised = net(x_next, t_next, class_labels):to("float64")
            local d_prime = (x_next - denoised) / t_next
            x_next = x_hat + (t_next - t_hat) * (0.5 * d_cur + 0.5 * d_prime)
        end
    end

    return x_next, t_steps
end

---------------------------------------------------------------------------------------------
-- tests (reference values: PyTorch 1.13, the same classes, weights and fixed draws)
---------------------------------------------------------------------------------------------
local function sum(t) return t:sum():item() end
local function sq(t) return (t ^ 2):sum():item() end
local function first4(t) return list(t:flatten():narrow(1, 1, 4)) end

describe("ported NVlabs/edm", function()
    local x = fixed({ 2, 3, 4, 4 }, 0.53)
    local sig = tide.tensor({ 0.3, 2.5 })

    it("VPPrecond: sigma_min / sigma_max, sigma_inv and D_x match PyTorch", function()
        local net = VPPrecond(4, 3)
        assert(close(net.sigma_min, 0.0009765625, 1e-5), net.sigma_min)
        assert(close(net.sigma_max, 152.166976929, 1e-5), net.sigma_max)
        assert_close_list({ 0.08817535639, 0.4412044883 }, list(net:sigma_inv(sig)), 1e-5,
            "sigma_inv")
        local out = net(x, sig)
        assert.are.same({ 2, 3, 4, 4 }, out:size())
        assert.are.equal("float32", out.dtype)
        assert(close(sum(out), -3618.553467, 1e-4), sum(out))
        assert(close(sq(out), 2723133, 1e-4), sq(out))
        assert_close_list({ -2.550271988, -2.121574402, -1.894699335, -1.78529191 },
            first4(out), 1e-4, "D_x")
        -- force_fp32 and use_fp16 off CUDA: the model still runs in float32
        net.use_fp16 = true
        local out2 = net(x, sig, nil, false)
        assert(close(sum(out2), sum(out), 1e-6))
    end)

    it("VEPrecond and EDMPrecond: D_x matches PyTorch", function()
        local ve = VEPrecond(4, 3)(x, sig)
        assert(close(sum(ve), 8.576853752, 1e-4), sum(ve))
        assert(close(sq(ve), 218.5314636, 1e-4), sq(ve))
        assert_close_list({ -0.1533233821, 0.4324287176, 0.9453599453, 1.09166801 },
            first4(ve), 1e-4, "VE D_x")
        local edm = EDMPrecond(4, 3)(x, sig)
        assert(close(sum(edm), 2.09091258, 1e-4), sum(edm))
        assert(close(sq(edm), 24.11377907, 1e-4), sq(edm))
        assert_close_list({ -0.1495220959, 0.3401623964, 0.8247509003, 0.9461890459 },
            first4(edm), 1e-4, "EDM D_x")
    end)

    local cases = {
        { "VPLoss", VPPrecond, VPLoss, 15222.33105, { 1259449.75, 201894.0312 },
            { 319.272644, 332.5501404, 275.1405029, 91.68071747 }, 358.210083,
            { 3349.822266, -6713.782227, 10087.90527 } },
        { "VELoss", VEPrecond, VELoss, 4.103928566, { 62.45414734, 331.5230103 },
            { -138.0269775, -188.8023987, -153.3988037, 238.2883148 }, 9.783081055,
            { -26.5303669, 23.02587509, 4.727925301 } },
        { "EDMLoss", EDMPrecond, EDMLoss, 1.481004834, { 73.48734283, 68.68911743 },
            { 25.39855766, 33.77898407, 9.470672607, -4.529996872 }, 3.026679993,
            { -17.22639084, 14.16747475, 11.18580914 } },
    }
    for _, c in ipairs(cases) do
        it(c[1] .. ": the loss and the model weight's gradient match PyTorch", function()
            local net = c[2](4, 3)
            local loss = c[3]()(net, x, nil)
            assert.are.same({ 2, 3, 4, 4 }, loss:size())
            assert(close(loss:mean():item(), c[4], 1e-4), loss:mean():item())
            assert_close_list(c[5], list(loss:sum({ 2, 3, 4 })), 1e-4, "per-sample loss")
            loss:sum():backward()
            local g = net.model.conv.weight.grad
            assert_close_list(c[6], list(g:flatten():narrow(1, 1, 4)), 1e-3, "weight grad")
            assert(close(g:sum():item(), c[7], 1e-3), g:sum():item())
            assert_close_list(c[8], list(net.model.conv.bias.grad), 1e-3, "bias grad")
        end)
    end

    local lat = fixed({ 2, 3, 4, 4 }, 0.29)
    local zeros = function(z) return tide.zeros_like(z) end
    it("edm_sampler: t_steps and 4 Heun steps without churn match PyTorch", function()
        local net = EDMPrecond(4, 3)
        local out, ts = tide.no_grad(edm_sampler, net, lat, nil,
            { num_steps = 4, randn_like = zeros })
        assert.are.equal("float64", ts.dtype)
        assert_close_list({ 80, 9.723201355, 0.469979058, 0.002, 0 }, list(ts), 1e-8, "t_steps")
        assert.are.equal("float64", out.dtype)
        assert.are.same({ 2, 3, 4, 4 }, out:size())
        assert(close(sum(out), 3.10109627619, 1e-4), sum(out))
        assert(close(sq(out), 6046.14924271, 1e-5), sq(out))
        assert_close_list({ 3.499471903, 8.44854641, 10.57124424, 8.29999733 },
            first4(out), 1e-4, "x_next")
        -- VPPrecond's sigma_max (152.17) is clipped to 80, its sigma_min (0.00098) to 0.002
        local vp, vts = tide.no_grad(edm_sampler, VPPrecond(4, 3), lat, nil,
            { num_steps = 4, randn_like = zeros })
        assert_close_list({ 80, 9.723201355, 0.469979058, 0.002, 0 }, list(vts), 1e-8, "VP t")
        assert(close(sum(vp), 3205835.29291, 1e-4), sum(vp))
        assert(close(sq(vp), 5.74029892022e+12, 1e-4), sq(vp))
    end)

    it("edm_sampler with S_churn / S_min / S_max and fixed noise matches PyTorch", function()
        local net = EDMPrecond(4, 3)
        local noise = function(z) return fixed(z:size(), 0.77, "float64") end
        local out = tide.no_grad(edm_sampler, net, lat, nil, { num_steps = 4, S_churn = 2,
            S_min = 0.05, S_max = 50, randn_like = noise })
        assert(close(sum(out), 28.4174179137, 1e-4), sum(out))
        assert(close(sq(out), 7308.15766897, 1e-5), sq(out))
        assert_close_list({ 3.981405973, 11.88634872, 15.97220707, 12.52751732 },
            first4(out), 1e-4, "x_next churn")
    end)
end)
