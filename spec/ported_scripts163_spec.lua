-- ported_scripts163_spec.lua — CompVis/stable-diffusion's sampler side:
-- ldm/modules/diffusionmodules/util.py (make_beta_schedule linear / cosine / sqrt_linear / sqrt,
-- make_ddim_timesteps uniform and quad, make_ddim_sampling_parameters, betas_for_alpha_bar,
-- extract_into_tensor, noise_like with repeat, timestep_embedding with repeat_only,
-- zero_module, scale_module, mean_flat, normalization / GroupNorm32, conv_nd, linear,
-- avg_pool_nd) and ldm/models/diffusion/ddim.py (DDIMSampler: register_buffer, make_schedule,
-- p_sample_ddim with classifier-free guidance, ddim_sampling, stochastic_encode, decode), ported
-- line for line at tiny sizes (latents 2 x 4 x 4 x 4, 50 DDPM steps, 5 DDIM steps). A tiny
-- model (a 3x3 conv 4 -> 4 plus 0.1 * the timestep embedding, plus c) stands in for the UNet
-- (ported_scripts95 ports the UNet, 86 the autoencoder). NumPy arrays become float64 tensors
-- (ddim.py's buffers keep the dtypes PyTorch gives them) or Lua lists of the 0-based timestep
-- values; torch.randn is a fixed formula on both sides. The Python line stands above each Lua
-- line that differs from it. Dims are 1-based; a timestep value stays 0-based (the model sees
-- it), and indexing a schedule with it adds 1.
local tide = require("tide")
local nn = tide.nn

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list
local repeat_ = tide.einops.repeat_

-- the stand-in for torch.randn: sin(1.3 k + 0.7 n) for the n-th call (k the flat index)
local randn_calls = 0
local function fixed_randn(shape)
    randn_calls = randn_calls + 1
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    return tide.sin(tide.arange(0, n, { dtype = "float64" }) * 1.3 + randn_calls * 0.7)
        :float():reshape(shape)
end

---------------------------------------------------------------------------------------------
-- 1. ldm/modules/diffusionmodules/util.py
---------------------------------------------------------------------------------------------
-- def make_beta_schedule(schedule, n_timestep, linear_start=1e-4, linear_end=2e-2,
--                        cosine_s=8e-3):
local function make_beta_schedule(schedule, n_timestep, linear_start, linear_end, cosine_s)
    linear_start, linear_end = linear_start or 1e-4, linear_end or 2e-2
    cosine_s = cosine_s or 8e-3
    local betas
    if schedule == "linear" then
        -- betas = (torch.linspace(linear_start ** 0.5, linear_end ** 0.5, n_timestep,
        --     dtype=torch.float64) ** 2)
        betas = tide.linspace(linear_start ^ 0.5, linear_end ^ 0.5, n_timestep,
            { dtype = "float64" }) ^ 2
    elseif schedule == "cosine" then
        -- timesteps = (torch.arange(n_timestep + 1, dtype=torch.float64) / n_timestep + cosine_s)
        local timesteps = tide.arange(n_timestep + 1, { dtype = "float64" }) / n_timestep
            + cosine_s
        -- alphas = timesteps / (1 + cosine_s) * np.pi / 2
        local alphas = timesteps / (1 + cosine_s) * math.pi / 2
        -- alphas = torch.cos(alphas).pow(2)
        alphas = tide.cos(alphas):pow(2)
        -- alphas = alphas / alphas[0]
        alphas = alphas / alphas[1]
        -- betas = 1 - alphas[1:] / alphas[:-1]
        betas = 1 - alphas[{ { 2, -1 } }] / alphas[{ { 1, -2 } }]
        -- betas = np.clip(betas, a_min=0, a_max=0.999)
        betas = betas:clip(0, 0.999)
    elseif schedule == "sqrt_linear" then
        betas = tide.linspace(linear_start, linear_end, n_timestep, { dtype = "float64" })
    elseif schedule == "sqrt" then
        betas = tide.linspace(linear_start, linear_end, n_timestep, { dtype = "float64" }) ^ 0.5
    else
        -- raise ValueError(f"schedule '{schedule}' unknown.")
        error(string.format("schedule '%s' unknown.", tostring(schedule)))
    end
    -- return betas.numpy()  (the float64 tensor stands for the array)
    return betas
end

-- def make_ddim_timesteps(ddim_discr_method, num_ddim_timesteps, num_ddpm_timesteps,
--                         verbose=True):
-- (a Lua list of the 0-based timestep values; verbose's print left out)
local function make_ddim_timesteps(ddim_discr_method, num_ddim_timesteps, num_ddpm_timesteps)
    local ddim_timesteps = {}
    if ddim_discr_method == "uniform" then
        -- c = num_ddpm_timesteps // num_ddim_timesteps
        local c = math.floor(num_ddpm_timesteps / num_ddim_timesteps)
        -- ddim_timesteps = np.asarray(list(range(0, num_ddpm_timesteps, c)))
        for v = 0, num_ddpm_timesteps - 1, c do ddim_timesteps[#ddim_timesteps + 1] = v end
    elseif ddim_discr_method == "quad" then
        -- ddim_timesteps = ((np.linspace(0, np.sqrt(num_ddpm_timesteps * .8),
        --     num_ddim_timesteps)) ** 2).astype(int)
        ddim_timesteps = (tide.linspace(0, math.sqrt(num_ddpm_timesteps * .8),
            num_ddim_timesteps, { dtype = "float64" }) ^ 2):long():tolist()
    else
        -- raise NotImplementedError(f'There is no ddim discretization method called
        --     "{ddim_discr_method}"')
        error(string.format('There is no ddim discretization method called "%s"',
            tostring(ddim_discr_method)))
    end
    -- steps_out = ddim_timesteps + 1
    local steps_out = {}
    for i, v in ipairs(ddim_timesteps) do steps_out[i] = v + 1 end
    return steps_out
end

-- def make_ddim_sampling_parameters(alphacums, ddim_timesteps, eta, verbose=True):
local function make_ddim_sampling_parameters(alphacums, ddim_timesteps, eta)
    -- alphas = alphacums[ddim_timesteps]  (the timestep values + 1 index)
    local idx = {}
    for i, v in ipairs(ddim_timesteps) do idx[i] = v + 1 end
    local alphas = alphacums:index_select(1, tide.tensor(idx))
    -- alphas_prev = np.asarray([alphacums[0]] + alphacums[ddim_timesteps[:-1]].tolist())
    local prev = { alphacums[1]:item() }
    for i = 1, #idx - 1 do prev[#prev + 1] = alphacums[idx[i]]:item() end
    local alphas_prev = tide.tensor(prev, { dtype = "float64" })
    -- sigmas = eta * np.sqrt((1 - alphas_prev) / (1 - alphas) * (1 - alphas / alphas_prev))
    local sigmas = eta * tide.sqrt((1 - alphas_prev) / (1 - alphas)
        * (1 - alphas / alphas_prev))
    return sigmas, alphas, alphas_prev
end

-- def betas_for_alpha_bar(num_diffusion_timesteps, alpha_bar, max_beta=0.999):
local function betas_for_alpha_bar(num_diffusion_timesteps, alpha_bar, max_beta)
    max_beta = max_beta or 0.999
    local betas = {}
    -- for i in range(num_diffusion_timesteps):
    for i = 0, num_diffusion_timesteps - 1 do
        local t1 = i / num_diffusion_timesteps
        local t2 = (i + 1) / num_diffusion_timesteps
        -- betas.append(min(1 - alpha_bar(t2) / alpha_bar(t1), max_beta))
        betas[#betas + 1] = math.min(1 - alpha_bar(t2) / alpha_bar(t1), max_beta)
    end
    -- return np.array(betas)
    return tide.tensor(betas, { dtype = "float64" })
end

-- def extract_into_tensor(a, t, x_shape):  (t: 1-based indices)
local function extract_into_tensor(a, t, x_shape)
    -- b, *_ = t.shape
    local b = t.shape[1]
    -- out = a.gather(-1, t)
    local out = a:gather(-1, t)
    -- return out.reshape(b, *((1,) * (len(x_shape) - 1)))
    local shape = { b }
    for _ = 2, #x_shape do shape[#shape + 1] = 1 end
    return out:reshape(shape)
end

-- def noise_like(shape, device, repeat=False):
local function noise_like(shape, device, rep) -- luacheck: ignore device
    -- repeat_noise = lambda: torch.randn((1, *shape[1:]), device=device).repeat(shape[0],
    --     *((1,) * (len(shape) - 1)))
    local function repeat_noise()
        local one, reps = { 1 }, { shape[1] }
        for i = 2, #shape do one[i], reps[i] = shape[i], 1 end
        local r = fixed_randn(one)
        return r["repeat"](r, reps)
    end
    -- noise = lambda: torch.randn(shape, device=device)
    local function noise() return fixed_randn(shape) end
    -- return repeat_noise() if repeat else noise()
    if rep then return repeat_noise() end
    return noise()
end

-- def timestep_embedding(timesteps, dim, max_period=10000, repeat_only=False):
local function timestep_embedding(timesteps, dim, max_period, repeat_only)
    max_period = max_period or 10000
    local embedding
    if not repeat_only then
        -- half = dim // 2
        local half = math.floor(dim / 2)
        -- freqs = torch.exp(-math.log(max_period) * torch.arange(start=0, end=half,
        --     dtype=torch.float32) / half).to(device=timesteps.device)
        local freqs = tide.exp(-math.log(max_period)
            * tide.arange({ start = 0, ["end"] = half, dtype = "float32" }) / half)
            :to({ device = timesteps.device })
        -- args = timesteps[:, None].float() * freqs[None]
        local args = timesteps[{ {}, tide.newaxis }]:float() * freqs[{ tide.newaxis }]
        -- embedding = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
        embedding = tide.cat({ tide.cos(args), tide.sin(args) }, { dim = -1 })
        -- if dim % 2:
        if dim % 2 == 1 then
            -- embedding = torch.cat([embedding, torch.zeros_like(embedding[:, :1])], dim=-1)
            embedding = tide.cat({ embedding, tide.zeros_like(embedding[{ {}, { 1, 1 } }]) },
                { dim = -1 })
        end
    else
        -- embedding = repeat(timesteps, 'b -> b d', d=dim)
        embedding = repeat_(timesteps, "b -> b d", { d = dim })
    end
    return embedding
end

-- def zero_module(module):
local function zero_module(module)
    -- for p in module.parameters(): p.detach().zero_()
    for _, p in ipairs(module:parameters()) do p:detach():zero_() end
    return module
end

-- def scale_module(module, scale):
local function scale_module(module, scale)
    -- for p in module.parameters(): p.detach().mul_(scale)
    for _, p in ipairs(module:parameters()) do p:detach():mul_(scale) end
    return module
end

-- def mean_flat(tensor):
local function mean_flat(tensor)
    -- return tensor.mean(dim=list(range(1, len(tensor.shape))))
    local dims = {}
    for d = 2, #tensor.shape do dims[#dims + 1] = d end
    return tensor:mean({ dim = dims })
end

-- class GroupNorm32(nn.GroupNorm):
local GroupNorm32 = nn.GroupNorm:extend("GroupNorm32")
function GroupNorm32:forward(x)
    -- return super().forward(x.float()).type(x.dtype)
    return nn.GroupNorm.forward(self, x:float()):type(x.dtype)
end

-- def normalization(channels): return GroupNorm32(32, channels)
local function normalization(channels)
    return GroupNorm32(32, channels)
end

-- def conv_nd(dims, *args, **kwargs):
local function conv_nd(dims, ...)
    if dims == 1 then
        return nn.Conv1d(...)
    elseif dims == 2 then
        return nn.Conv2d(...)
    elseif dims == 3 then
        return nn.Conv3d(...)
    end
    -- raise ValueError(f"unsupported dimensions: {dims}")
    error("unsupported dimensions: " .. tostring(dims))
end

-- def linear(*args, **kwargs): return nn.Linear(*args, **kwargs)
local function linear(...)
    return nn.Linear(...)
end

-- def avg_pool_nd(dims, *args, **kwargs):
local function avg_pool_nd(dims, ...)
    if dims == 1 then
        return nn.AvgPool1d(...)
    elseif dims == 2 then
        return nn.AvgPool2d(...)
    elseif dims == 3 then
        return nn.AvgPool3d(...)
    end
    error("unsupported dimensions: " .. tostring(dims))
end

---------------------------------------------------------------------------------------------
-- 2. the stand-in model (LatentDiffusion's schedule buffers, apply_model)
---------------------------------------------------------------------------------------------
-- fill a parameter with sin(a k + b) * s (k the flat index), float64 rounded to its dtype
local function fill(p, a, b, s)
    tide.no_grad(function()
        p:copy_((tide.sin(tide.arange(0, p:numel(), { dtype = "float64" }) * a + b) * s)
            :to(p.dtype):reshape(p.shape))
    end)
end

-- a 2 x 4 x 4 x 4 float32 field sin(a k + b)
local function field(a, b)
    return tide.sin(tide.arange(0, 128, { dtype = "float64" }) * a + b):float()
        :reshape({ 2, 4, 4, 4 })
end

local TinyModel = nn.Module:extend("TinyModel")
function TinyModel:init()
    self.num_timesteps = 50
    self.conv = nn.Conv2d(4, 4, 3, { padding = 1 })
    fill(self.conv.weight, 0.37, 0.1, 0.2)
    fill(self.conv.bias, 0.53, 0.2, 0.05)
    -- (ddpm.py's register_schedule:)
    local betas = make_beta_schedule("linear", 50)
    -- alphas_cumprod = np.cumprod(alphas, axis=0)
    local alphas_cumprod = (1 - betas):cumprod(1)
    -- alphas_cumprod_prev = np.append(1., alphas_cumprod[:-1])
    local alphas_cumprod_prev = tide.cat({ tide.ones(1, { dtype = "float64" }),
        alphas_cumprod[{ { 1, -2 } }] })
    -- to_torch = partial(torch.tensor, dtype=torch.float32)
    self.betas = betas:float()
    self.alphas_cumprod = alphas_cumprod:float()
    self.alphas_cumprod_prev = alphas_cumprod_prev:float()
    self.device = "cpu"
end
function TinyModel:apply_model(x, t, c)
    -- emb = timestep_embedding(t, 4); return self.conv(x) + 0.1 * emb[:, :, None, None] + c
    local emb = timestep_embedding(t, 4)
    return self.conv(x) + 0.1 * emb[{ {}, {}, tide.newaxis, tide.newaxis }] + c
end

---------------------------------------------------------------------------------------------
-- 3. ldm/models/diffusion/ddim.py
---------------------------------------------------------------------------------------------
-- class DDIMSampler(object):
local DDIMSampler = ported.class("DDIMSampler")
-- def __init__(self, model, schedule="linear", **kwargs):
function DDIMSampler:__init__(model, schedule)
    self.model = model
    self.ddpm_num_timesteps = model.num_timesteps
    self.schedule = schedule or "linear"
end

-- def register_buffer(self, name, attr):
-- GAP: no CUDA here; ddim.py moves a tensor to "cuda" first (tide's attr:to("cuda") where
-- one is present); the sampler keeps it on its model's device
function DDIMSampler:register_buffer(name, attr)
    -- setattr(self, name, attr)
    self[name] = attr
end

-- def make_schedule(self, ddim_num_steps, ddim_discretize="uniform", ddim_eta=0.,
--                   verbose=True):
function DDIMSampler:make_schedule(ddim_num_steps, ddim_discretize, ddim_eta)
    ddim_discretize, ddim_eta = ddim_discretize or "uniform", ddim_eta or 0.
    self.ddim_timesteps = make_ddim_timesteps(ddim_discretize, ddim_num_steps,
        self.ddpm_num_timesteps)
    local alphas_cumprod = self.model.alphas_cumprod
    -- assert alphas_cumprod.shape[0] == self.ddpm_num_timesteps, 'alphas have to be defined
    --     for each timestep'
    assert(alphas_cumprod.shape[1] == self.ddpm_num_timesteps,
        "alphas have to be defined for each timestep")
    -- to_torch = lambda x: x.clone().detach().to(torch.float32).to(self.model.device)
    local to_torch = function(x)
        return x:clone():detach():to("float32"):to(self.model.device)
    end

    self:register_buffer("betas", to_torch(self.model.betas))
    self:register_buffer("alphas_cumprod", to_torch(alphas_cumprod))
    self:register_buffer("alphas_cumprod_prev", to_torch(self.model.alphas_cumprod_prev))

    -- calculations for diffusion q(x_t | x_{t-1}) and others
    -- self.register_buffer('sqrt_alphas_cumprod', to_torch(np.sqrt(alphas_cumprod.cpu())))
    self:register_buffer("sqrt_alphas_cumprod", to_torch(tide.sqrt(alphas_cumprod:cpu())))
    self:register_buffer("sqrt_one_minus_alphas_cumprod",
        to_torch(tide.sqrt(1. - alphas_cumprod:cpu())))
    self:register_buffer("log_one_minus_alphas_cumprod",
        to_torch(tide.log(1. - alphas_cumprod:cpu())))
    self:register_buffer("sqrt_recip_alphas_cumprod",
        to_torch(tide.sqrt(1. / alphas_cumprod:cpu())))
    self:register_buffer("sqrt_recipm1_alphas_cumprod",
        to_torch(tide.sqrt(1. / alphas_cumprod:cpu() - 1)))

    -- ddim sampling parameters
    local ddim_sigmas, ddim_alphas, ddim_alphas_prev = make_ddim_sampling_parameters(
        alphas_cumprod:cpu(), self.ddim_timesteps, ddim_eta)
    self:register_buffer("ddim_sigmas", ddim_sigmas)
    self:register_buffer("ddim_alphas", ddim_alphas)
    self:register_buffer("ddim_alphas_prev", ddim_alphas_prev)
    -- self.register_buffer('ddim_sqrt_one_minus_alphas', np.sqrt(1. - ddim_alphas))
    self:register_buffer("ddim_sqrt_one_minus_alphas", tide.sqrt(1. - ddim_alphas))
    -- sigmas_for_original_sampling_steps = ddim_eta * torch.sqrt(
    --     (1 - self.alphas_cumprod_prev) / (1 - self.alphas_cumprod) * (
    --         1 - self.alphas_cumprod / self.alphas_cumprod_prev))
    local sigmas_for_original_sampling_steps = ddim_eta * tide.sqrt(
        (1 - self.alphas_cumprod_prev) / (1 - self.alphas_cumprod) * (
            1 - self.alphas_cumprod / self.alphas_cumprod_prev))
    self:register_buffer("ddim_sigmas_for_original_num_steps", sigmas_for_original_sampling_steps)
end

-- @torch.no_grad()
-- def ddim_sampling(self, cond, shape, x_T=None, ddim_use_original_steps=False, callback=None,
--     timesteps=None, quantize_denoised=False, mask=None, x0=None, img_callback=None,
--     log_every_t=100, temperature=1., noise_dropout=0., score_corrector=None,
--     corrector_kwargs=None, unconditional_guidance_scale=1., unconditional_conditioning=None):
-- (the options Python passes by keyword in a table; mask, callbacks, score_corrector,
-- noise_dropout and timesteps-subsets left at their defaults; tqdm and prints left out)
function DDIMSampler:ddim_sampling(cond, shape, o)
    return tide.no_grad(function()
        o = o or {}
        local log_every_t = o.log_every_t or 100
        local b = shape[1]
        local img
        -- if x_T is None: img = torch.randn(shape, device=device)
        if o.x_T == nil then img = fixed_randn(shape) else img = o.x_T end
        -- timesteps = self.ddpm_num_timesteps if ddim_use_original_steps else
        --     self.ddim_timesteps
        local timesteps = o.ddim_use_original_steps and self.ddpm_num_timesteps
            or self.ddim_timesteps

        local intermediates = { x_inter = { img }, pred_x0 = { img } }
        -- time_range = reversed(range(0,timesteps)) if ddim_use_original_steps else
        --     np.flip(timesteps)
        local time_range = {}
        if o.ddim_use_original_steps then
            for s = timesteps - 1, 0, -1 do time_range[#time_range + 1] = s end
        else
            for i = #timesteps, 1, -1 do time_range[#time_range + 1] = timesteps[i] end
        end
        -- total_steps = timesteps if ddim_use_original_steps else timesteps.shape[0]
        local total_steps = o.ddim_use_original_steps and timesteps or #timesteps

        -- for i, step in enumerate(iterator):  (i stays 0-based)
        for i0, step in ipairs(time_range) do
            local i = i0 - 1
            local index = total_steps - i - 1
            -- ts = torch.full((b,), step, device=device, dtype=torch.long)
            local ts = tide.full({ b }, step, { dtype = "int64" })
            local pred_x0
            img, pred_x0 = self:p_sample_ddim(img, cond, ts, index, {
                use_original_steps = o.ddim_use_original_steps,
                unconditional_guidance_scale = o.unconditional_guidance_scale,
                unconditional_conditioning = o.unconditional_conditioning })
            if index % log_every_t == 0 or index == total_steps - 1 then
                table.insert(intermediates.x_inter, img)
                table.insert(intermediates.pred_x0, pred_x0)
            end
        end
        return img, intermediates
    end)
end

-- @torch.no_grad()
-- def p_sample_ddim(self, x, c, t, index, repeat_noise=False, use_original_steps=False,
--     quantize_denoised=False, temperature=1., noise_dropout=0., score_corrector=None,
--     corrector_kwargs=None, unconditional_guidance_scale=1., unconditional_conditioning=None):
-- (index stays 0-based, as ddim_sampling counts it; quantize_denoised, score_corrector and
-- noise_dropout off)
function DDIMSampler:p_sample_ddim(x, c, t, index, o)
    return tide.no_grad(function()
        o = o or {}
        local scale = o.unconditional_guidance_scale or 1.
        local uc = o.unconditional_conditioning
        local temperature = o.temperature or 1.
        -- b, *_, device = *x.shape, x.device
        local b, device = x.shape[1], x.device

        local e_t
        if uc == nil or scale == 1. then
            e_t = self.model:apply_model(x, t, c)
        else
            -- x_in = torch.cat([x] * 2)
            local x_in = tide.cat({ x, x })
            -- t_in = torch.cat([t] * 2)
            local t_in = tide.cat({ t, t })
            -- c_in = torch.cat([unconditional_conditioning, c])
            local c_in = tide.cat({ uc, c })
            -- e_t_uncond, e_t = self.model.apply_model(x_in, t_in, c_in).chunk(2)
            local chunks = self.model:apply_model(x_in, t_in, c_in):chunk(2)
            local e_t_uncond = chunks[1]
            e_t = chunks[2]
            e_t = e_t_uncond + scale * (e_t - e_t_uncond)
        end

        local m = self.model
        local alphas = o.use_original_steps and m.alphas_cumprod or self.ddim_alphas
        local alphas_prev = o.use_original_steps and m.alphas_cumprod_prev
            or self.ddim_alphas_prev
        local sqrt_one_minus_alphas = o.use_original_steps and m.sqrt_one_minus_alphas_cumprod
            or self.ddim_sqrt_one_minus_alphas
        local sigmas = o.use_original_steps and m.ddim_sigmas_for_original_num_steps
            or self.ddim_sigmas
        -- select parameters corresponding to the currently considered timestep
        -- a_t = torch.full((b, 1, 1, 1), alphas[index], device=device)
        local a_t = tide.full({ b, 1, 1, 1 }, alphas[index + 1], { device = device })
        local a_prev = tide.full({ b, 1, 1, 1 }, alphas_prev[index + 1], { device = device })
        local sigma_t = tide.full({ b, 1, 1, 1 }, sigmas[index + 1], { device = device })
        local sqrt_one_minus_at = tide.full({ b, 1, 1, 1 }, sqrt_one_minus_alphas[index + 1],
            { device = device })

        -- current prediction for x_0
        local pred_x0 = (x - sqrt_one_minus_at * e_t) / a_t:sqrt()
        -- direction pointing to x_t
        -- dir_xt = (1. - a_prev - sigma_t**2).sqrt() * e_t
        local dir_xt = (1. - a_prev - sigma_t ^ 2):sqrt() * e_t
        -- noise = sigma_t * noise_like(x.shape, device, repeat_noise) * temperature
        local noise = sigma_t * noise_like(x.shape, device, o.repeat_noise) * temperature
        local x_prev = a_prev:sqrt() * pred_x0 + dir_xt + noise
        return x_prev, pred_x0
    end)
end

-- @torch.no_grad()
-- def stochastic_encode(self, x0, t, use_original_steps=False, noise=None):
-- (t: 1-based indices into the schedule)
function DDIMSampler:stochastic_encode(x0, t, use_original_steps, noise)
    return tide.no_grad(function()
        local sqrt_alphas_cumprod, sqrt_one_minus_alphas_cumprod
        if use_original_steps then
            sqrt_alphas_cumprod = self.sqrt_alphas_cumprod
            sqrt_one_minus_alphas_cumprod = self.sqrt_one_minus_alphas_cumprod
        else
            sqrt_alphas_cumprod = tide.sqrt(self.ddim_alphas)
            sqrt_one_minus_alphas_cumprod = self.ddim_sqrt_one_minus_alphas
        end
        -- if noise is None: noise = torch.randn_like(x0)
        if noise == nil then noise = fixed_randn(x0.shape) end
        return (extract_into_tensor(sqrt_alphas_cumprod, t, x0.shape) * x0 +
            extract_into_tensor(sqrt_one_minus_alphas_cumprod, t, x0.shape) * noise)
    end)
end

-- @torch.no_grad()
-- def decode(self, x_latent, cond, t_start, unconditional_guidance_scale=1.0,
--            unconditional_conditioning=None, use_original_steps=False):
function DDIMSampler:decode(x_latent, cond, t_start, o)
    return tide.no_grad(function()
        o = o or {}
        -- timesteps = np.arange(self.ddpm_num_timesteps) if use_original_steps else
        --     self.ddim_timesteps
        -- timesteps = timesteps[:t_start]
        local timesteps = {}
        for i = 1, t_start do
            timesteps[i] = o.use_original_steps and i - 1 or self.ddim_timesteps[i]
        end

        -- time_range = np.flip(timesteps)
        local time_range = {}
        for i = #timesteps, 1, -1 do time_range[#time_range + 1] = timesteps[i] end
        local total_steps = #timesteps

        local x_dec = x_latent
        for i0, step in ipairs(time_range) do
            local index = total_steps - (i0 - 1) - 1
            -- ts = torch.full((x_latent.shape[0],), step, device=x_latent.device,
            --     dtype=torch.long)
            local ts = tide.full({ x_latent.shape[1] }, step,
                { device = x_latent.device, dtype = "int64" })
            -- x_dec, _ = self.p_sample_ddim(x_dec, cond, ts, index=index, ...)
            x_dec = self:p_sample_ddim(x_dec, cond, ts, index, {
                use_original_steps = o.use_original_steps,
                unconditional_guidance_scale = o.unconditional_guidance_scale,
                unconditional_conditioning = o.unconditional_conditioning })
        end
        return x_dec
    end)
end

---------------------------------------------------------------------------------------------
-- tests: values from PyTorch 1.13 running the same functions (noise and weights by formula)
---------------------------------------------------------------------------------------------
-- Lua 5.1 / LuaJIT write 1. as 1: float literals carry their dtype
local F32 = { dtype = "float32" }

local function pick(t, ...)
    local out = {}
    for i, ix in ipairs({ ... }) do out[i] = t[ix]:item() end
    return out
end

describe("ported_scripts163: stable-diffusion util.py schedules", function()
    it("make_beta_schedule: linear, cosine, sqrt_linear, sqrt", function()
        local want = {
            linear = { 0.0001, 0.00135576284, 0.005936966379, 0.02, 0.361507568365 },
            cosine = { 0.001747513534, 0.02179070487, 0.063049777351, 0.999, 6.537902164418 },
            sqrt_linear = { 0.0001, 0.00416122449, 0.010253061224, 0.02, 0.5025 },
            sqrt = { 0.01, 0.064507553742, 0.101257400838, 0.141421356237, 4.715620269265 },
        }
        for _, s in ipairs({ "linear", "cosine", "sqrt_linear", "sqrt" }) do
            local b = make_beta_schedule(s, 50)
            assert.are.same({ 50 }, b.shape)
            assert.are.equal("float64", b.dtype)
            local got = pick(b, 1, 11, 26, 50)
            got[5] = b:sum():item()
            assert_close_list(want[s], got, 1e-9, s)
        end
        assert.has_error(function() make_beta_schedule("exp", 50) end)
    end)

    it("make_ddim_timesteps and betas_for_alpha_bar", function()
        assert.are.same({ 1, 11, 21, 31, 41 }, make_ddim_timesteps("uniform", 5, 50))
        assert.are.same({ 1, 3, 11, 23, 41 }, make_ddim_timesteps("quad", 5, 50))
        local ab = function(t) return math.cos((t + 0.008) / 1.008 * math.pi / 2) ^ 2 end
        local bb = betas_for_alpha_bar(50, ab)
        local got = pick(bb, 1, 26, 50)
        got[4] = bb:sum():item()
        assert_close_list({ 0.001747513534, 0.063049777351, 0.999, 6.537902164418 }, got, 1e-9,
            "betas_for_alpha_bar")
    end)

    it("extract_into_tensor, noise_like(repeat), timestep_embedding", function()
        local a = tide.arange(10, { dtype = "float64" }) * 0.1
        local e = extract_into_tensor(a, tide.tensor({ 4, 8 }), { 2, 4, 4, 4 })
        assert.are.same({ 2, 1, 1, 1 }, e.shape)
        assert_close_list({ 0.3, 0.7 }, e:flatten():tolist(), 1e-12, "extract")
        randn_calls = 0
        local n = noise_like({ 2, 2, 2 }, "cpu", true)
        assert_close_list({ 0.644217669964, 0.909297406673, -0.157745689154, -0.993691027164,
            0.644217669964, 0.909297406673, -0.157745689154, -0.993691027164 },
            n:flatten():tolist(), 1e-6, "noise_like repeat")
        local emb = timestep_embedding(tide.tensor({ 0, 7, 33 }), 5)
        assert.are.same({ 3, 5 }, emb.shape)
        assert_close_list({ 1.0, 1.0, 0.0, 0.0, 0.0, 0.753902256489, 0.99755102396, 0.6569865942,
            0.069942846894, 0.0, -0.013276747428, 0.946042358875, 0.99991184473, 0.324043005705,
            0.0 }, emb:flatten():tolist(), 1e-5, "timestep_embedding")
        local rep = timestep_embedding(tide.tensor({ 2, 9 }), 3, nil, true)
        assert.are.same({ 2, 3 }, rep.shape)
        assert.are.same({ { 2, 2, 2 }, { 9, 9, 9 } }, rep:tolist())
    end)

    it("GroupNorm32, mean_flat, zero/scale_module, conv_nd, linear, avg_pool_nd", function()
        local x = tide.arange(2 * 32 * 2 * 2, { dtype = "float64" }):reshape({ 2, 32, 2, 2 })
            :sin()
        local gn = normalization(32)
        fill(gn.weight, 0.3, 0.2, 1.0)
        fill(gn.bias, 0.5, 0.1, 0.5)
        local y = gn(x)
        assert.are.equal("float64", y.dtype)
        assert_close_list({ 15.995709491894, 1.457141041756, 0.148907035589 },
            { y:sum():item(), y[1][4][2][1]:item(), y[2][31][1][2]:item() }, 1e-5, "GroupNorm32")
        assert_close_list({ 0.009288231663, 0.002049784952 }, mean_flat(x):tolist(), 1e-12,
            "mean_flat")
        local lin = linear(3, 2)
        fill(lin.weight, 0.4, 0.0, 1.0)
        fill(lin.bias, 0.9, 0.3, 1.0)
        scale_module(lin, 0.5)
        assert_close_list({ 1.613212585449, 3.295558929443 },
            lin(tide.tensor({ { 1., 2., 3. } }, F32)):flatten():tolist(), 1e-6, "scale_module")
        local z = zero_module(conv_nd(3, 2, 3, 1))
        local out = z(tide.ones({ 1, 2, 2, 2, 2 }))
        assert.are.same({ 1, 3, 2, 2, 2 }, out.shape)
        assert.are.equal(0, out:abs():sum():item())
        assert.are.same({ 1, 3, 4 }, conv_nd(1, 2, 3, 3)(tide.ones({ 1, 2, 6 })).shape)
        assert.has_error(function() conv_nd(4, 2, 3, 3) end, "unsupported dimensions: 4")
        local p1 = avg_pool_nd(1, 2)(tide.tensor({ { { 1., 3., 5., 7. } } }, F32))
        assert.are.same({ { { 2, 6 } } }, p1:tolist())
        assert.are.equal(3.5, avg_pool_nd(2, 2)(tide.arange(4, F32):reshape({ 1, 1, 2, 2 })
            + 2):item())
        local p3 = avg_pool_nd(3, 2)(tide.arange(8, F32):reshape({ 1, 1, 2, 2, 2 }))
        assert.are.equal(3.5, p3:item())
    end)
end)

describe("ported_scripts163: stable-diffusion ddim.py DDIMSampler", function()
    local model = TinyModel()
    local S = DDIMSampler(model)
    S:make_schedule(5, nil, 0.5)
    local x, c, uc = field(0.9, 0.3), field(0.41, 1.1) * 0.2, field(0.23, -0.4) * 0.2

    it("make_schedule: ddim timesteps, sampling parameters and buffers", function()
        assert.are.same({ 1, 11, 21, 31, 41 }, S.ddim_timesteps)
        assert.are.equal("float64", S.ddim_sigmas.dtype)
        assert.are.equal("float32", S.ddim_alphas.dtype)
        assert.are.equal("float64", S.ddim_alphas_prev.dtype)
        assert.are.equal("float32", S.ddim_sqrt_one_minus_alphas.dtype)
        assert_close_list({ 0.003926540455, 0.007949020375, 0.040486289851, 0.078054417054,
            0.117732487535 }, S.ddim_sigmas:tolist(), 1e-6, "ddim_sigmas")
        assert_close_list({ 0.999739170074, 0.99165058136, 0.962268531322, 0.900310754776,
            0.800333142281 }, S.ddim_alphas:tolist(), 1e-7, "ddim_alphas")
        assert_close_list({ 0.999899983406, 0.999739170074, 0.99165058136, 0.962268531322,
            0.900310754776 }, S.ddim_alphas_prev:tolist(), 1e-9, "ddim_alphas_prev")
        assert_close_list({ 0.016150230542, 0.091375149786, 0.194245904684, 0.315736025572,
            0.446840971708 }, S.ddim_sqrt_one_minus_alphas:tolist(), 1e-6, "sqrt_one_minus")
        local o = S.ddim_sigmas_for_original_num_steps
        local got = pick(o, 2, 26, 50)
        got[4] = o:sum():item()
        assert_close_list({ 0.003926344216, 0.036614403129, 0.069046340883, 1.795398950577 },
            got, 1e-5, "sigmas_for_original_num_steps")
        assert_close_list({ -4.990894794464, 13.676078796387 },
            { S.log_one_minus_alphas_cumprod[11]:item(),
                S.sqrt_recipm1_alphas_cumprod:sum():item() }, 1e-5, "log / recipm1 buffers")
    end)

    it("p_sample_ddim: one step without and with guidance", function()
        local t = tide.full({ 2 }, 31, { dtype = "int64" })
        randn_calls = 0
        local xp, p0 = S:p_sample_ddim(x, c, t, 3)
        assert.are.same({ 2, 4, 4, 4 }, xp.shape)
        assert_close_list({ -0.79325902462, -0.629031896591, 0.991046309471, -4.040484428406,
            -0.275975346565 }, { xp:sum():item(), xp[1][2][3][4]:item(), xp[2][4][1][2]:item(),
            p0:sum():item(), p0[2][3][4][1]:item() }, 1e-5, "p_sample_ddim")
        randn_calls = 0
        xp, p0 = S:p_sample_ddim(x, c, t, 3, { unconditional_guidance_scale = 7.5,
            unconditional_conditioning = uc })
        assert_close_list({ -0.162172436714, -0.642482221127, 1.134496450424, -2.626786708832,
            -0.978365719318 }, { xp:sum():item(), xp[1][2][3][4]:item(), xp[2][4][1][2]:item(),
            p0:sum():item(), p0[2][3][4][1]:item() }, 1e-5, "p_sample_ddim guided")
    end)

    it("ddim_sampling: the full 5-step guided sample", function()
        randn_calls = 0
        local img, inter = S:ddim_sampling(c, { 2, 4, 4, 4 }, { x_T = x, log_every_t = 2,
            unconditional_guidance_scale = 3.0, unconditional_conditioning = uc })
        assert.are.equal(5, randn_calls)
        assert_close_list({ -7.102205753326, 99.7607421875, 0.318860381842, 0.911711275578, 4,
            -7.226761341095 }, { img:sum():item(), img:abs():sum():item(),
            img[1][1][1][1]:item(), img[2][4][4][4]:item(), #inter.x_inter,
            inter.pred_x0[3]:sum():item() }, 1e-5, "ddim_sampling")
    end)

    it("stochastic_encode and decode", function()
        local x0, nz = field(0.77, 0.5), field(1.7, 0.2)
        local z = S:stochastic_encode(x0, tide.tensor({ 3, 5 }), false, nz)
        assert_close_list({ 1.992969512939, -0.993937551975, 0.462052345276 },
            { z:sum():item(), z[1][2][2][2]:item(), z[2][3][1][4]:item() }, 1e-5, "encode")
        local z2 = S:stochastic_encode(x0, tide.tensor({ 11, 41 }), true, nz)
        assert_close_list({ 1.955605506897, 0.866146981716 },
            { z2:sum():item(), z2[2][1][3][3]:item() }, 1e-5, "encode original steps")
        local S2 = DDIMSampler(model)
        S2:make_schedule(5, nil, 0.0)
        randn_calls = 0
        local d = S2:decode(z, c, 3, { unconditional_guidance_scale = 2.0,
            unconditional_conditioning = uc })
        assert_close_list({ -0.266202926636, -0.784825146198, 0.415666937828 },
            { d:sum():item(), d[1][3][2][4]:item(), d[2][2][4][1]:item() }, 1e-5, "decode")
    end)
end)
