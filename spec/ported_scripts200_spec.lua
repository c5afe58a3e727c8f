-- ported_scripts200_spec.lua — yang-song/score_sde_pytorch's sde_lib.py (SDE with reverse(),
-- VPSDE, subVPSDE, VESDE: sde, marginal_prob, prior_sampling, prior_logp, discretize),
-- models/utils.py (get_model_fn, get_score_fn), losses.py (get_sde_loss_fn, get_smld_loss_fn,
-- get_ddpm_loss_fn) and sampling.py's predictors (EulerMaruyama, ReverseDiffusion, Ancestral)
-- and correctors (LangevinCorrector, AnnealedLangevinDynamics) with pc_sampler's loop, ported
-- line for line at tiny sizes (data 2x1x4x4, N = 10). The Python line stands above each Lua line
-- that differs from it. The score model is a tiny one of ours (a 1x1 Conv2d and a time
-- embedding). Randomness is given, not drawn: torch.randn_like / torch.randn read a fixed
-- noise stream (sin of the index and the call count), torch.rand gives u = {0.3, 0.9} and
-- torch.randint the labels {2, 7}, on both sides, so the values are PyTorch 1.13's.
-- Time labels and timesteps stay 0-based values (they feed the model); they become 1-based only
-- where they index a tensor.
local tide = require("tide")
local nn = tide.nn

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

-- Python's subclass: lookups missing on cls go on to parent
local function subclass(name, parent)
    local cls = ported.class(name)
    cls.__init__ = nil -- the parent's __init__, unless cls defines one
    getmetatable(cls).__index = parent
    return cls
end

-- isinstance(o, cls)
local function isinstance(o, cls)
    local c = getmetatable(o)
    while c do
        if c == cls then return true end
        local m = getmetatable(c)
        c = m and m.__index
    end
    return false
end

-- x[:, None, None, None] of a 1-D x
local function bcast(v)
    return v:view(-1, 1, 1, 1)
end

-- v[idx] of a 1-D v with 0-based int64 indices, negative ones wrapping as Python's
local function at(v, idx)
    return v:index_select(1, idx % v:size(1) + 1)
end

-- the given randomness (see the header)
local noise_count = 0
local function noise(shape)
    local j = noise_count
    noise_count = noise_count + 1
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    local v = {}
    for k = 0, n - 1 do v[k + 1] = math.sin(1.3 * k + 0.9 * j + 0.5) end
    return (tide.tensor(v) * 1.2):view(shape)
end
local function randn_like(x)
    return noise(x:size())
end
local function rand_u(_)
    return tide.tensor({ 0.3, 0.9 })
end
local function randint_labels(_)
    return tide.tensor({ 2, 7 }, { dtype = "int64" })
end

---------------------------------------------------------------------------------------------
-- sde_lib.py
---------------------------------------------------------------------------------------------
-- class SDE(abc.ABC):
local SDE = ported.class("SDE")
function SDE:__init__(N)
    self.N = N
end

-- def discretize(self, x, t):
function SDE:discretize(x, t)
    local dt = 1 / self.N
    local drift, diffusion = self:sde(x, t)
    local f = drift * dt
    -- G = diffusion * torch.sqrt(torch.tensor(dt, device=t.device))
    local G = diffusion * math.sqrt(dt)
    return f, G
end

-- def reverse(self, score_fn, probability_flow=False):
function SDE:reverse(score_fn, probability_flow)
    local N = self.N
    local T = self.T
    -- sde_fn = self.sde
    local sde_fn = function(x, t) return self:sde(x, t) end
    -- discretize_fn = self.discretize
    local discretize_fn = function(x, t) return self:discretize(x, t) end

    -- class RSDE(self.__class__):
    local RSDE = subclass("RSDE", getmetatable(self))
    function RSDE:__init__()
        self.N = N
        self.probability_flow = probability_flow
    end
    RSDE.T = T

    function RSDE:sde(x, t)
        local drift, diffusion = sde_fn(x, t)
        local score = score_fn(x, t)
        -- drift = drift - diffusion[:, None, None, None] ** 2 * score * (0.5 if ... else 1.)
        drift = drift - bcast(diffusion) ^ 2 * score * (self.probability_flow and 0.5 or 1)
        -- diffusion = 0. if self.probability_flow else diffusion
        diffusion = self.probability_flow and 0 or diffusion
        return drift, diffusion
    end

    function RSDE:discretize(x, t)
        local f, G = discretize_fn(x, t)
        -- rev_f = f - G[:, None, None, None] ** 2 * score_fn(x, t) * (0.5 if ... else 1.)
        local rev_f = f - bcast(G) ^ 2 * score_fn(x, t) * (self.probability_flow and 0.5 or 1)
        -- rev_G = torch.zeros_like(G) if self.probability_flow else G
        local rev_G = self.probability_flow and tide.zeros_like(G) or G
        return rev_f, rev_G
    end

    return RSDE()
end

-- class VPSDE(SDE):
local VPSDE = subclass("VPSDE", SDE)
VPSDE.T = 1
-- def __init__(self, beta_min=0.1, beta_max=20, N=1000):
function VPSDE:__init__(beta_min, beta_max, N)
    beta_min, beta_max, N = beta_min or 0.1, beta_max or 20, N or 1000
    SDE.__init__(self, N)
    self.beta_0 = beta_min
    self.beta_1 = beta_max
    self.N = N
    self.discrete_betas = tide.linspace(beta_min / N, beta_max / N, N)
    self.alphas = 1 - self.discrete_betas
    -- self.alphas_cumprod = torch.cumprod(self.alphas, dim=0)
    self.alphas_cumprod = tide.cumprod(self.alphas, 1)
    self.sqrt_alphas_cumprod = tide.sqrt(self.alphas_cumprod)
    self.sqrt_1m_alphas_cumprod = tide.sqrt(1 - self.alphas_cumprod)
end

function VPSDE:sde(x, t)
    local beta_t = self.beta_0 + t * (self.beta_1 - self.beta_0)
    local drift = -0.5 * bcast(beta_t) * x
    local diffusion = tide.sqrt(beta_t)
    return drift, diffusion
end

function VPSDE:marginal_prob(x, t)
    local log_mean_coeff = -0.25 * t ^ 2 * (self.beta_1 - self.beta_0) - 0.5 * t * self.beta_0
    local mean = tide.exp(bcast(log_mean_coeff)) * x
    local std = tide.sqrt(1 - tide.exp(2 * log_mean_coeff))
    return mean, std
end

-- def prior_sampling(self, shape): return torch.randn(*shape)
-- (the draw is given: noise(shape) is the stream torch.randn reads in the check)
function VPSDE:prior_sampling(shape)
    return noise(shape)
end

function VPSDE:prior_logp(z)
    local shape = z:size()
    -- N = np.prod(shape[1:])
    local N = 1
    for i = 2, #shape do N = N * shape[i] end
    -- logps = -N / 2. * np.log(2 * np.pi) - torch.sum(z ** 2, dim=(1, 2, 3)) / 2.
    local logps = -N / 2 * math.log(2 * math.pi) - (z ^ 2):sum({ 2, 3, 4 }) / 2
    return logps
end

-- DDPM discretization.
function VPSDE:discretize(x, t)
    local timestep = (t * (self.N - 1) / self.T):long()
    -- beta = self.discrete_betas.to(x.device)[timestep]
    local beta = at(self.discrete_betas, timestep)
    local alpha = at(self.alphas, timestep)
    local sqrt_beta = tide.sqrt(beta)
    local f = bcast(tide.sqrt(alpha)) * x - x
    local G = sqrt_beta
    return f, G
end

-- class subVPSDE(SDE):
local subVPSDE = subclass("subVPSDE", SDE)
subVPSDE.T = 1
function subVPSDE:__init__(beta_min, beta_max, N)
    beta_min, beta_max, N = beta_min or 0.1, beta_max or 20, N or 1000
    SDE.__init__(self, N)
    self.beta_0 = beta_min
    self.beta_1 = beta_max
    self.N = N
end

function subVPSDE:sde(x, t)
    local beta_t = self.beta_0 + t * (self.beta_1 - self.beta_0)
    local drift = -0.5 * bcast(beta_t) * x
    -- discount = 1. - torch.exp(-2 * self.beta_0 * t - (self.beta_1 - self.beta_0) * t ** 2)
    local discount = 1 - tide.exp(-2 * self.beta_0 * t - (self.beta_1 - self.beta_0) * t ^ 2)
    local diffusion = tide.sqrt(beta_t * discount)
    return drift, diffusion
end

function subVPSDE:marginal_prob(x, t)
    local log_mean_coeff = -0.25 * t ^ 2 * (self.beta_1 - self.beta_0) - 0.5 * t * self.beta_0
    local mean = bcast(tide.exp(log_mean_coeff)) * x
    local std = 1 - tide.exp(2 * log_mean_coeff)
    return mean, std
end

subVPSDE.prior_sampling = VPSDE.prior_sampling
subVPSDE.prior_logp = VPSDE.prior_logp

-- class VESDE(SDE):
local VESDE = subclass("VESDE", SDE)
VESDE.T = 1
-- def __init__(self, sigma_min=0.01, sigma_max=50, N=1000):
function VESDE:__init__(sigma_min, sigma_max, N)
    sigma_min, sigma_max, N = sigma_min or 0.01, sigma_max or 50, N or 1000
    SDE.__init__(self, N)
    self.sigma_min = sigma_min
    self.sigma_max = sigma_max
    -- torch.exp(torch.linspace(np.log(self.sigma_min), np.log(self.sigma_max), N))
    self.discrete_sigmas = tide.exp(tide.linspace(math.log(sigma_min), math.log(sigma_max), N))
    self.N = N
end

function VESDE:sde(x, t)
    local sigma = self.sigma_min * (self.sigma_max / self.sigma_min) ^ t
    local drift = tide.zeros_like(x)
    -- diffusion = sigma * torch.sqrt(torch.tensor(2 * (np.log(self.sigma_max) - ...)))
    local diffusion = sigma * math.sqrt(2 * (math.log(self.sigma_max) - math.log(self.sigma_min)))
    return drift, diffusion
end

function VESDE:marginal_prob(x, t)
    local std = self.sigma_min * (self.sigma_max / self.sigma_min) ^ t
    local mean = x
    return mean, std
end

-- return torch.randn(*shape) * self.sigma_max (the draw given, as VPSDE's)
function VESDE:prior_sampling(shape)
    return noise(shape) * self.sigma_max
end

function VESDE:prior_logp(z)
    local shape = z:size()
    local N = 1
    for i = 2, #shape do N = N * shape[i] end
    -- return -N / 2. * np.log(2 * np.pi * self.sigma_max ** 2) - torch.sum(z ** 2, dim=(1, 2, 3))
    --        / (2 * self.sigma_max ** 2)
    return -N / 2 * math.log(2 * math.pi * self.sigma_max ^ 2)
        - (z ^ 2):sum({ 2, 3, 4 }) / (2 * self.sigma_max ^ 2)
end

-- SMLD(NCSN) discretization.
function VESDE:discretize(x, t)
    local timestep = (t * (self.N - 1) / self.T):long()
    local sigma = at(self.discrete_sigmas, timestep)
    -- adjacent_sigma = torch.where(timestep == 0, torch.zeros_like(t),
    --                              self.discrete_sigmas[timestep - 1].to(t.device))
    -- (Python's [-1] at timestep 0 reads the last sigma, masked by where; at() wraps the same)
    local adjacent_sigma = tide.where(timestep:eq(0), tide.zeros_like(t),
        at(self.discrete_sigmas, timestep - 1))
    local f = tide.zeros_like(x)
    local G = tide.sqrt(sigma ^ 2 - adjacent_sigma ^ 2)
    return f, G
end

---------------------------------------------------------------------------------------------
-- models/utils.py
---------------------------------------------------------------------------------------------
local function get_model_fn(model, train)
    local function model_fn(x, labels)
        if not train then
            model:eval()
            return model(x, labels)
        else
            model:train()
            return model(x, labels)
        end
    end
    return model_fn
end

local function get_score_fn(sde, model, train, continuous)
    local model_fn = get_model_fn(model, train)
    local score_fn
    if isinstance(sde, VPSDE) or isinstance(sde, subVPSDE) then
        score_fn = function(x, t)
            local score, std
            if continuous or isinstance(sde, subVPSDE) then
                local labels = t * 999
                score = model_fn(x, labels)
                -- std = sde.marginal_prob(torch.zeros_like(x), t)[1]
                local _
                _, std = sde:marginal_prob(tide.zeros_like(x), t)
            else
                local labels = t * (sde.N - 1)
                score = model_fn(x, labels)
                -- std = sde.sqrt_1m_alphas_cumprod.to(labels.device)[labels.long()]
                std = at(sde.sqrt_1m_alphas_cumprod, labels:long())
            end
            score = -score / bcast(std)
            return score
        end
    elseif isinstance(sde, VESDE) then
        score_fn = function(x, t)
            local labels
            if continuous then
                local _
                _, labels = sde:marginal_prob(tide.zeros_like(x), t)
            else
                labels = sde.T - t
                labels = labels * (sde.N - 1)
                labels = tide.round(labels):long()
            end
            return model_fn(x, labels)
        end
    else
        error(string.format("SDE class %s not yet supported.", getmetatable(sde).__name))
    end
    return score_fn
end

---------------------------------------------------------------------------------------------
-- losses.py
---------------------------------------------------------------------------------------------
-- reduce_op = torch.mean if reduce_mean else
--     lambda *args, **kwargs: 0.5 * torch.sum(*args, **kwargs)
local function make_reduce_op(reduce_mean)
    if reduce_mean then
        return function(x, dim) return x:mean(dim) end
    end
    return function(x, dim) return 0.5 * x:sum(dim) end
end

-- def get_sde_loss_fn(sde, train, reduce_mean=True, continuous=True, likelihood_weighting=True,
--                     eps=1e-5):
local function get_sde_loss_fn(sde, train, reduce_mean, continuous, likelihood_weighting, eps)
    eps = eps or 1e-5
    local reduce_op = make_reduce_op(reduce_mean)

    local function loss_fn(model, batch)
        local score_fn = get_score_fn(sde, model, train, continuous)
        -- t = torch.rand(batch.shape[0], device=batch.device) * (sde.T - eps) + eps
        local t = rand_u(batch:size(1)) * (sde.T - eps) + eps
        local z = randn_like(batch)
        local mean, std = sde:marginal_prob(batch, t)
        local perturbed_data = mean + bcast(std) * z
        local score = score_fn(perturbed_data, t)

        local losses
        if not likelihood_weighting then
            losses = tide.square(score * bcast(std) + z)
            -- losses = reduce_op(losses.reshape(losses.shape[0], -1), dim=-1)
            losses = reduce_op(losses:reshape(losses:size(1), -1), -1)
        else
            -- g2 = sde.sde(torch.zeros_like(batch), t)[1] ** 2
            local _, g = sde:sde(tide.zeros_like(batch), t)
            local g2 = g ^ 2
            losses = tide.square(score + z / bcast(std))
            losses = reduce_op(losses:reshape(losses:size(1), -1), -1) * g2
        end
        local loss = tide.mean(losses)
        return loss
    end
    return loss_fn
end

local function get_smld_loss_fn(vesde, train, reduce_mean)
    assert(isinstance(vesde, VESDE), "SMLD training only works for VESDEs.")
    -- smld_sigma_array = torch.flip(vesde.discrete_sigmas, dims=(0,))
    local smld_sigma_array = tide.flip(vesde.discrete_sigmas, { 1 })
    local reduce_op = make_reduce_op(reduce_mean)

    local function loss_fn(model, batch)
        local model_fn = get_model_fn(model, train)
        -- labels = torch.randint(0, vesde.N, (batch.shape[0],), device=batch.device)
        local labels = randint_labels(batch:size(1))
        local sigmas = at(smld_sigma_array, labels)
        local noise_ = randn_like(batch) * bcast(sigmas)
        local perturbed_data = noise_ + batch
        local score = model_fn(perturbed_data, labels)
        -- target = -noise / (sigmas ** 2)[:, None, None, None]
        local target = -noise_ / bcast(sigmas ^ 2)
        local losses = tide.square(score - target)
        losses = reduce_op(losses:reshape(losses:size(1), -1), -1) * sigmas ^ 2
        local loss = tide.mean(losses)
        return loss
    end
    return loss_fn
end

local function get_ddpm_loss_fn(vpsde, train, reduce_mean)
    assert(isinstance(vpsde, VPSDE), "DDPM training only works for VPSDEs.")
    local reduce_op = make_reduce_op(reduce_mean)

    local function loss_fn(model, batch)
        local model_fn = get_model_fn(model, train)
        local labels = randint_labels(batch:size(1))
        local sqrt_alphas_cumprod = vpsde.sqrt_alphas_cumprod
        local sqrt_1m_alphas_cumprod = vpsde.sqrt_1m_alphas_cumprod
        local noise_ = randn_like(batch)
        -- perturbed_data = sqrt_alphas_cumprod[labels, None, None, None] * batch + \
        --                  sqrt_1m_alphas_cumprod[labels, None, None, None] * noise
        local perturbed_data = bcast(at(sqrt_alphas_cumprod, labels)) * batch
            + bcast(at(sqrt_1m_alphas_cumprod, labels)) * noise_
        local score = model_fn(perturbed_data, labels)
        local losses = tide.square(score - noise_)
        losses = reduce_op(losses:reshape(losses:size(1), -1), -1)
        local loss = tide.mean(losses)
        return loss
    end
    return loss_fn
end

---------------------------------------------------------------------------------------------
-- sampling.py
---------------------------------------------------------------------------------------------
local Predictor = ported.class("Predictor")
function Predictor:__init__(sde, score_fn, probability_flow)
    self.sde = sde
    -- Compute the reverse SDE/ODE
    self.rsde = sde:reverse(score_fn, probability_flow)
    self.score_fn = score_fn
end

local Corrector = ported.class("Corrector")
function Corrector:__init__(sde, score_fn, snr, n_steps)
    self.sde = sde
    self.score_fn = score_fn
    self.snr = snr
    self.n_steps = n_steps
end

local EulerMaruyamaPredictor = subclass("EulerMaruyamaPredictor", Predictor)
function EulerMaruyamaPredictor:update_fn(x, t)
    local dt = -1 / self.rsde.N
    local z = randn_like(x)
    local drift, diffusion = self.rsde:sde(x, t)
    local x_mean = x + drift * dt
    -- x = x_mean + diffusion[:, None, None, None] * np.sqrt(-dt) * z
    x = x_mean + bcast(diffusion) * math.sqrt(-dt) * z
    return x, x_mean
end

local ReverseDiffusionPredictor = subclass("ReverseDiffusionPredictor", Predictor)
function ReverseDiffusionPredictor:update_fn(x, t)
    local f, G = self.rsde:discretize(x, t)
    local z = randn_like(x)
    local x_mean = x - f
    x = x_mean + bcast(G) * z
    return x, x_mean
end

local AncestralSamplingPredictor = subclass("AncestralSamplingPredictor", Predictor)
function AncestralSamplingPredictor:__init__(sde, score_fn, probability_flow)
    Predictor.__init__(self, sde, score_fn, probability_flow)
    if not isinstance(sde, VPSDE) and not isinstance(sde, VESDE) then
        error(string.format("SDE class %s not yet supported.", getmetatable(sde).__name))
    end
    assert(not probability_flow, "Probability flow not supported by ancestral sampling")
end

function AncestralSamplingPredictor:vpsde_update_fn(x, t)
    local sde = self.sde
    local timestep = (t * (sde.N - 1) / sde.T):long()
    local beta = at(sde.discrete_betas, timestep)
    local score = self.score_fn(x, t)
    -- x_mean = (x + beta[:, None, None, None] * score) / torch.sqrt(1. - beta)[:, None, None, None]
    local x_mean = (x + bcast(beta) * score) / bcast(tide.sqrt(1 - beta))
    local noise_ = randn_like(x)
    x = x_mean + bcast(tide.sqrt(beta)) * noise_
    return x, x_mean
end

function AncestralSamplingPredictor:update_fn(x, t)
    -- (vesde_update_fn is not ported: the brief asks for VPSDE)
    if isinstance(self.sde, VPSDE) then
        return self:vpsde_update_fn(x, t)
    end
end

-- the alpha of both correctors
local function corrector_alpha(sde, t)
    if isinstance(sde, VPSDE) or isinstance(sde, subVPSDE) then
        local timestep = (t * (sde.N - 1) / sde.T):long()
        -- alpha = sde.alphas.to(t.device)[timestep] (subVPSDE has no alphas: upstream's bug)
        return at(sde.alphas, timestep)
    end
    return tide.ones_like(t)
end

local LangevinCorrector = subclass("LangevinCorrector", Corrector)
function LangevinCorrector:update_fn(x, t)
    local sde = self.sde
    local score_fn = self.score_fn
    local n_steps = self.n_steps
    local target_snr = self.snr
    local alpha = corrector_alpha(sde, t)

    local x_mean
    for _ = 1, n_steps do
        local grad = score_fn(x, t)
        local noise_ = randn_like(x)
        -- grad_norm = torch.norm(grad.reshape(grad.shape[0], -1), dim=-1).mean()
        local grad_norm = grad:reshape(grad:size(1), -1):norm({ dim = -1 }):mean()
        local noise_norm = noise_:reshape(noise_:size(1), -1):norm({ dim = -1 }):mean()
        local step_size = (target_snr * noise_norm / grad_norm) ^ 2 * 2 * alpha
        x_mean = x + bcast(step_size) * grad
        x = x_mean + bcast(tide.sqrt(step_size * 2)) * noise_
    end
    return x, x_mean
end

local AnnealedLangevinDynamics = subclass("AnnealedLangevinDynamics", Corrector)
function AnnealedLangevinDynamics:update_fn(x, t)
    local sde = self.sde
    local score_fn = self.score_fn
    local n_steps = self.n_steps
    local target_snr = self.snr
    local alpha = corrector_alpha(sde, t)

    -- std = self.sde.marginal_prob(x, t)[1]
    local _, std = self.sde:marginal_prob(x, t)

    local x_mean
    for _ = 1, n_steps do
        local grad = score_fn(x, t)
        local noise_ = randn_like(x)
        local step_size = (target_snr * std) ^ 2 * 2 * alpha
        x_mean = x + bcast(step_size) * grad
        x = x_mean + noise_ * bcast(tide.sqrt(step_size * 2))
    end
    return x, x_mean
end

---------------------------------------------------------------------------------------------
-- the tiny score model (ours) and the checks
---------------------------------------------------------------------------------------------
local TinyScore = nn.Module:extend("TinyScore")
function TinyScore:init()
    self.conv = nn.Conv2d(1, 1, 1)
    self.temb = nn.Linear(1, 1)
    tide.no_grad(function()
        self.conv.weight:fill_(0.8)
        self.conv.bias:fill_(-0.05)
        self.temb.weight:fill_(0.6)
        self.temb.bias:fill_(0.1)
    end)
end
function TinyScore:forward(x, labels)
    -- emb = self.temb(torch.sin(labels.float()[:, None] * 0.01))
    local emb = self.temb(tide.sin(labels:float():view(-1, 1) * 0.01))
    -- return self.conv(x) + emb[:, :, None, None]
    return self.conv(x) + emb:view(emb:size(1), emb:size(2), 1, 1)
end

local function x0()
    local v = {}
    for k = 0, 31 do v[k + 1] = math.sin(0.37 * k + 0.1) * 1.5 end
    return tide.tensor(v):view(2, 1, 4, 4)
end

-- per sample: the sum and the sum weighted by position 1..16 (a 1-D tensor: its values)
local W = tide.arange(1, 17):float()
local function summ(x, into)
    into = into or {}
    if type(x) == "number" then
        into[#into + 1] = x
        return into
    end
    local vals
    if x.ndim <= 1 then
        vals = x:reshape(-1):totable()
    else
        local r = x:reshape(2, -1)
        local s, w = r:sum(2):totable(), (r * W):sum(2):totable()
        vals = { s[1], s[2], w[1], w[2] }
    end
    for _, v in ipairs(vals) do into[#into + 1] = v end
    return into
end

-- PyTorch 1.13's values (VPSDE(0.1, 5, N=10), subVPSDE(0.1, 5, N=10), VESDE(0.01, 2, N=10))
local REF = {
    vp_sde = { -0.304558039, -1.95589161, 48.980072, 107.477219, 1.25299644, 2.12367606 },
    vp_marg = { 0.342298388, 0.307415903, -55.0496254, -16.8926582, 0.470731944, 0.93508327 },
    vp_logp = { -24.178915, -23.8722458 },
    vp_prior = { 1.20598125, 0.587339997, 4.94633865, 12.2939053 },
    vp_disc = { -0.0237921476, -0.221514434, 3.82636452, 12.1723185, 0.344802678, 0.667499483 },
    vp_rsde = { 8.01229286, 24.7100239, -55.6071396, 121.788811, 1.25299644, 2.12367606 },
    vp_rdisc = { 0.606004715, 2.4128859, -4.09354401, 13.5862007, 0.344802678, 0.667499483 },
    vp_rode = { 3.85386753, 11.3770647, -3.31353283, 114.633011 },
    subvp_sde = { -0.304558039, -1.95589161, 48.980072, 107.477219, 0.786574006, 2.10685325 },
    subvp_marg = { 0.342298388, 0.307415903, -55.0496254, -16.8926582, 0.221588552, 0.874380767 },
    subvp_logp = { -24.178915, -23.8722458 },
    subvp_prior = { 1.20598125, 0.587339997, 4.94633865, 12.2939053 },
    subvp_disc = { -0.0304558016, -0.19558917, 4.89800787, 10.7477226, 0.248736545, 0.66624552 },
    subvp_rsde = { 6.65793467, 26.111248, -38.575634, 122.54084, 0.786574006, 2.10685325 },
    subvp_rdisc = { 0.665793657, 2.61112499, -3.8575635, 12.2540846, 0.248736545, 0.66624552 },
    subvp_rode = { 3.17668843, 12.0776777, 5.20221996, 115.009026 },
    ve_sde = { 0, 0, 0, 0, 0.15954861, 3.8327539 },
    ve_marg = { 0.387971759, 0.867357731, -62.3949966, -47.6617393, 0.0490127467, 1.17740786 },
    ve_logp = { -28.1623459, -28.0856781 },
    ve_prior = { 2.41196251, 1.17467999, 9.89267731, 24.5878105 },
    ve_disc = { 0, 0, 0, 0, 0.0270003062, 0.923397541 },
    ve_rsde = { -0.0283852816, -23.6055832, 1.09653246, 446.115509, 0.15954861, 3.8327539 },
    ve_rdisc = { -0.00081291399, -1.37015712, 0.0314031169, 25.8942242, 0.0270003062, 0.923397541 },
    ve_rode = { -0.0141926408, -11.8027916, 0.548266232, 223.057755 },
    loss_vp_True_False = { 0.558968008 },
    loss_vp_True_True = { 3.72672534 },
    loss_vp_False_False = { 4.47174406 },
    loss_vp_False_True = { 29.8138027 },
    loss_subvp_True_False = { 0.669995725 },
    loss_subvp_True_True = { 7.5517931 },
    loss_subvp_False_False = { 5.3599658 },
    loss_subvp_False_True = { 60.4143448 },
    loss_ve_True_False = { 2.2515769 },
    loss_ve_True_True = { 23.8591404 },
    loss_ve_False_False = { 18.0126152 },
    loss_ve_False_True = { 190.873123 },
    loss_vp_discrete = { 0.557652056 },
    grad_ve = { 190.873123, 253.079926, 0.230110094 },
    smld_False = { 8.88820457 },
    ddpm_False = { 4.42175245 },
    smld_True = { 1.11102557 },
    ddpm_True = { 0.552719057 },
    grad_ddpm = { 0.129178524 },
    pc_em_langevin_vp = {
        -5.64191818, -5.30991507, -82.6067276, -78.7420502,
        -4.80205774, -6.16965437, -72.6548309, -83.3764954 },
    pc_rd_ald_ve = {
        21.9295158, 13.546752, -355.210266, -284.431641,
        22.617712, 12.8422585, -347.05545, -288.229156 },
    pc_anc_langevin_vp = {
        -7.11526585, -6.73716116, -93.8175354, -89.7765198,
        -6.27552319, -7.5967803, -83.8670349, -94.4103241 },
    pc_rd_langevin_vp = {
        -5.4876461, -5.24070454, -85.8341827, -81.7856216,
        -4.64790344, -6.10032368, -75.8836823, -86.4194183 },
    pc_em_ald_ve = {
        40.5645256, 26.9295979, -644.770874, -495.802734,
        41.4171944, 26.0567455, -634.667114, -500.507812 },
}

local function new_sdes()
    return { vp = VPSDE(0.1, 5, 10), subvp = subVPSDE(0.1, 5, 10), ve = VESDE(0.01, 2, 10) }
end

describe("score_sde_pytorch sde_lib.py", function()
    it("gives each SDE's sde, marginal_prob, prior and discretize at t = 0.3 and 0.9", function()
        local sdes, model, x = new_sdes(), TinyScore(), x0()
        local t = tide.tensor({ 0.3, 0.9 })
        for _, name in ipairs({ "vp", "subvp", "ve" }) do
            local sde = sdes[name]
            local d, g = sde:sde(x, t)
            assert_close_list(REF[name .. "_sde"], summ(g, summ(d)), 1e-5, name .. " sde")
            local m, s = sde:marginal_prob(x, t)
            assert_close_list(REF[name .. "_marg"], summ(s, summ(m)), 1e-5, name .. " marginal")
            assert_close_list(REF[name .. "_logp"], summ(sde:prior_logp(x)), 1e-5, name .. " logp")
            noise_count = 0
            local p = sde:prior_sampling({ 2, 1, 4, 4 })
            assert.are.same({ 2, 1, 4, 4 }, p:size())
            assert_close_list(REF[name .. "_prior"], summ(p), 1e-5, name .. " prior")
            local f, G = sde:discretize(x, t)
            assert_close_list(REF[name .. "_disc"], summ(G, summ(f)), 1e-5, name .. " discretize")
            local score_fn = get_score_fn(sde, model, false, true)
            local rs = sde:reverse(score_fn)
            assert.is_true(isinstance(rs, getmetatable(sde)))
            tide.no_grad(function()
                d, g = rs:sde(x, t)
                assert_close_list(REF[name .. "_rsde"], summ(g, summ(d)), 1e-4, name .. " rsde")
                f, G = rs:discretize(x, t)
                assert_close_list(REF[name .. "_rdisc"], summ(G, summ(f)), 1e-4, name .. " rdisc")
                d, g = sde:reverse(score_fn, true):sde(x, t)
                assert.are.equal(0, g)
                assert_close_list(REF[name .. "_rode"], summ(d), 1e-4, name .. " ode")
            end)
        end
    end)
end)

describe("score_sde_pytorch losses.py", function()
    it("gives get_sde_loss_fn's losses, reduce_mean and likelihood_weighting on and off", function()
        local sdes, model, x = new_sdes(), TinyScore(), x0()
        for _, name in ipairs({ "vp", "subvp", "ve" }) do
            for _, rm in ipairs({ true, false }) do
                for _, lw in ipairs({ false, true }) do
                    noise_count = 0
                    local lf = get_sde_loss_fn(sdes[name], true, rm, true, lw)
                    local key = string.format("loss_%s_%s_%s", name, rm and "True" or "False",
                        lw and "True" or "False")
                    assert_close_list(REF[key], { lf(model, x):item() }, 1e-5, key)
                end
            end
        end
        noise_count = 0
        local lf = get_sde_loss_fn(sdes.vp, true, true, false, false)
        assert_close_list(REF.loss_vp_discrete, { lf(model, x):item() }, 1e-5, "vp discrete")
    end)

    it("gives a loss's gradients, and the SMLD and DDPM losses", function()
        local sdes, model, x = new_sdes(), TinyScore(), x0()
        noise_count = 0
        local l = get_sde_loss_fn(sdes.ve, true, false, true, true)(model, x)
        l:backward()
        assert_close_list(REF.grad_ve, { l:item(), model.conv.weight.grad:reshape(-1)[1]:item(),
            model.temb.weight.grad:reshape(-1)[1]:item() }, 1e-4, "ve loss grad")
        for _, rm in ipairs({ false, true }) do
            local key = rm and "True" or "False"
            noise_count = 0
            local smld = get_smld_loss_fn(sdes.ve, true, rm)(model, x):item()
            assert_close_list(REF["smld_" .. key], { smld }, 1e-5, "smld " .. key)
            noise_count = 0
            local ddpm = get_ddpm_loss_fn(sdes.vp, true, rm)(model, x):item()
            assert_close_list(REF["ddpm_" .. key], { ddpm }, 1e-5, "ddpm " .. key)
        end
        model:zero_grad()
        noise_count = 0
        get_ddpm_loss_fn(sdes.vp, true, true)(model, x):backward()
        assert_close_list(REF.grad_ddpm, { model.conv.bias.grad:reshape(-1)[1]:item() }, 1e-4,
            "ddpm bias grad")
    end)
end)

describe("score_sde_pytorch sampling.py", function()
    -- pc_sampler's loop, 3 of its N steps from x0, n_steps 1, snr 0.16
    local function pc(sde, P, C, model)
        noise_count = 0
        local eps = 1e-3
        local x = x0()
        local timesteps = tide.linspace(sde.T, eps, sde.N)
        local score_fn = get_score_fn(sde, model, false, true)
        local pr, co = P(sde, score_fn, false), C(sde, score_fn, 0.16, 1)
        local x_mean
        tide.no_grad(function()
            -- for i in range(3):
            for i = 1, 3 do
                local vec_t = tide.ones(2) * timesteps[i]
                x, x_mean = co:update_fn(x, vec_t)
                x, x_mean = pr:update_fn(x, vec_t)
            end
        end)
        return summ(x_mean, summ(x))
    end

    it("runs 3 predictor-corrector steps as PyTorch", function()
        local sdes, model = new_sdes(), TinyScore()
        assert_close_list(REF.pc_em_langevin_vp,
            pc(sdes.vp, EulerMaruyamaPredictor, LangevinCorrector, model), 1e-4, "EM+Langevin")
        assert_close_list(REF.pc_rd_ald_ve,
            pc(sdes.ve, ReverseDiffusionPredictor, AnnealedLangevinDynamics, model), 1e-4, "RD+ALD")
        assert_close_list(REF.pc_anc_langevin_vp,
            pc(sdes.vp, AncestralSamplingPredictor, LangevinCorrector, model), 1e-4, "Anc+Lang")
        assert_close_list(REF.pc_rd_langevin_vp,
            pc(sdes.vp, ReverseDiffusionPredictor, LangevinCorrector, model), 1e-4, "RD+Lang")
        assert_close_list(REF.pc_em_ald_ve,
            pc(sdes.ve, EulerMaruyamaPredictor, AnnealedLangevinDynamics, model), 1e-4, "EM+ALD")
    end)
end)
