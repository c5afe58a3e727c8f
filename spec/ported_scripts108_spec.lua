-- ported_scripts108_spec.lua — crowsonkb/k-diffusion's k_diffusion/sampling.py (append_zero,
-- get_sigmas_karras / _exponential / _polyexponential / _vp, to_d, get_ancestral_step,
-- default_noise_sampler, sample_euler with s_churn / s_tmin / s_tmax / s_noise,
-- sample_euler_ancestral, sample_heun, sample_dpm_2, sample_dpm_2_ancestral,
-- linear_multistep_coeff and sample_lms, sample_dpmpp_2s_ancestral, sample_dpmpp_sde (with a
-- given noise_sampler), sample_dpmpp_2m) and k_diffusion/utils.py's append_dims, ported line for
-- line at tiny sizes: a 2 x 3 x 4 x 4 latent, a toy denoiser x / (1 + sigma^2) + a fixed 3x3
-- conv, 6 Karras sigmas, and fixed "noise" (cosines) in place of randn_like on both sides.
-- The Python line stands above each Lua line that differs from it. Keyword arguments are an
-- options table; `i` runs 1-based (the callback's 'i' is 1-based, PyTorch's i + 1).
-- Reference values: PyTorch 1.13 running sampling.py itself (torchsde / torchdiffeq / tqdm
-- stubbed out), scipy's quad for the LMS coefficients.
local tide = require("tide")
local F = tide.nn.functional

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

-- torch.randn_like, as sampling.py calls it (the check below puts fixed noise here)
local randn_like = tide.randn_like

---------------------------------------------------------------------------------------------
-- k_diffusion/utils.py
---------------------------------------------------------------------------------------------
-- def append_dims(x, target_dims):
local function append_dims(x, target_dims)
    -- dims_to_append = target_dims - x.ndim
    local dims_to_append = target_dims - x.ndim
    if dims_to_append < 0 then
        -- raise ValueError(f'input has {x.ndim} dims but target_dims is {target_dims}, ...')
        error(string.format("input has %d dims but target_dims is %d, which is less",
            x.ndim, target_dims))
    end
    -- return x[(...,) + (None,) * dims_to_append]
    local index = { "..." }
    for _ = 1, dims_to_append do index[#index + 1] = tide.newaxis end
    return x[index]
end

---------------------------------------------------------------------------------------------
-- k_diffusion/sampling.py
---------------------------------------------------------------------------------------------
-- def append_zero(x):
local function append_zero(x)
    -- return torch.cat([x, x.new_zeros([1])])
    return tide.cat({ x, x:new_zeros({ 1 }) })
end

-- def get_sigmas_karras(n, sigma_min, sigma_max, rho=7., device='cpu'):
local function get_sigmas_karras(n, sigma_min, sigma_max, rho, device)
    rho, device = rho or 7, device or "cpu"
    -- ramp = torch.linspace(0, 1, n)
    local ramp = tide.linspace(0, 1, n)
    local min_inv_rho = sigma_min ^ (1 / rho)
    local max_inv_rho = sigma_max ^ (1 / rho)
    -- sigmas = (max_inv_rho + ramp * (min_inv_rho - max_inv_rho)) ** rho
    local sigmas = (max_inv_rho + ramp * (min_inv_rho - max_inv_rho)) ^ rho
    -- return append_zero(sigmas).to(device)
    return append_zero(sigmas):to(device)
end

-- def get_sigmas_exponential(n, sigma_min, sigma_max, device='cpu'):
local function get_sigmas_exponential(n, sigma_min, sigma_max, device)
    -- sigmas = torch.linspace(math.log(sigma_max), math.log(sigma_min), n, device=device).exp()
    local sigmas = tide.linspace(math.log(sigma_max), math.log(sigma_min), n,
        { device = device or "cpu" }):exp()
    return append_zero(sigmas)
end

-- def get_sigmas_polyexponential(n, sigma_min, sigma_max, rho=1., device='cpu'):
local function get_sigmas_polyexponential(n, sigma_min, sigma_max, rho, device)
    rho = rho or 1
    -- ramp = torch.linspace(1, 0, n, device=device) ** rho
    local ramp = tide.linspace(1, 0, n, { device = device or "cpu" }) ^ rho
    -- sigmas = torch.exp(ramp * (math.log(sigma_max) - math.log(sigma_min)) + math.log(sigma_min))
    local sigmas = tide.exp(ramp * (math.log(sigma_max) - math.log(sigma_min))
        + math.log(sigma_min))
    return append_zero(sigmas)
end

-- def get_sigmas_vp(n, beta_d=19.9, beta_min=0.1, eps_s=1e-3, device='cpu'):
local function get_sigmas_vp(n, beta_d, beta_min, eps_s, device)
    beta_d, beta_min, eps_s = beta_d or 19.9, beta_min or 0.1, eps_s or 1e-3
    -- t = torch.linspace(1, eps_s, n, device=device)
    local t = tide.linspace(1, eps_s, n, { device = device or "cpu" })
    -- sigmas = torch.sqrt(torch.exp(beta_d * t ** 2 / 2 + beta_min * t) - 1)
    local sigmas = tide.sqrt(tide.exp(beta_d * t ^ 2 / 2 + beta_min * t) - 1)
    return append_zero(sigmas)
end

-- def to_d(x, sigma, denoised):
local function to_d(x, sigma, denoised)
    -- return (x - denoised) / utils.append_dims(sigma, x.ndim)
    return (x - denoised) / append_dims(sigma, x.ndim)
end

-- def get_ancestral_step(sigma_from, sigma_to, eta=1.):
local function get_ancestral_step(sigma_from, sigma_to, eta)
    eta = eta or 1
    -- if not eta:
    if eta == 0 then
        -- return sigma_to, 0.
        return sigma_to, 0
    end
    -- sigma_up = min(sigma_to, eta * (sigma_to ** 2 * (sigma_from ** 2 - sigma_to ** 2)
    --     / sigma_from ** 2) ** 0.5)
    local sigma_up = tide.minimum(sigma_to, eta * (sigma_to ^ 2 * (sigma_from ^ 2 - sigma_to ^ 2)
        / sigma_from ^ 2) ^ 0.5)
    -- sigma_down = (sigma_to ** 2 - sigma_up ** 2) ** 0.5
    local sigma_down = (sigma_to ^ 2 - sigma_up ^ 2) ^ 0.5
    return sigma_down, sigma_up
end

-- def default_noise_sampler(x):
local function default_noise_sampler(x)
    -- return lambda sigma, sigma_next: torch.randn_like(x)
    return function(_, _) return randn_like(x) end
end

-- class BatchedBrownianTree / class BrownianTreeNoiseSampler: torchsde.BrownianTree
-- GAP: tide has no torchsde, so no BrownianTreeNoiseSampler; sample_dpmpp_sde needs a noise_sampler

-- for i in trange(len(sigmas) - 1, disable=disable):
-- GAP: tide has no tqdm (no tide.utils.tqdm / trange): a plain loop, `disable` is accepted
-- and ignored, no progress bar

-- gamma = min(s_churn / (len(sigmas) - 1), 2 ** 0.5 - 1) if s_tmin <= sigmas[i] <= s_tmax else 0.
-- (shared by sample_euler, sample_heun and sample_dpm_2; Lua's <= on a tensor needs :item())
local function churn_gamma(o, sigmas, i)
    local s = sigmas[i]:item()
    return (o.s_tmin <= s and s <= o.s_tmax) and math.min(o.s_churn / (#sigmas - 1), 2 ^ 0.5 - 1)
        or 0
end

-- the keyword defaults of sample_euler / sample_heun / sample_dpm_2:
-- extra_args=None, callback=None, disable=None, s_churn=0., s_tmin=0., s_tmax=float('inf'),
-- s_noise=1.
local function churn_opts(opts)
    opts = opts or {}
    return { extra_args = opts.extra_args or {}, callback = opts.callback, disable = opts.disable,
        s_churn = opts.s_churn or 0, s_tmin = opts.s_tmin or 0, s_tmax = opts.s_tmax or math.huge,
        s_noise = opts.s_noise or 1 }
end

-- @torch.no_grad()
-- def sample_euler(model, x, sigmas, extra_args=None, callback=None, disable=None, s_churn=0.,
--                  s_tmin=0., s_tmax=float('inf'), s_noise=1.):
local sample_euler = tide.no_grad()(function(model, x, sigmas, opts)
    local o = churn_opts(opts)
    -- s_in = x.new_ones([x.shape[0]])
    local s_in = x:new_ones({ x.shape[1] })
    -- for i in trange(len(sigmas) - 1, disable=disable):
    for i = 1, #sigmas - 1 do
        local gamma = churn_gamma(o, sigmas, i)
        -- eps = torch.randn_like(x) * s_noise
        local eps = randn_like(x) * o.s_noise
        -- sigma_hat = sigmas[i] * (gamma + 1)
        local sigma_hat = sigmas[i] * (gamma + 1)
        if gamma > 0 then
            -- x = x + eps * (sigma_hat ** 2 - sigmas[i] ** 2) ** 0.5
            x = x + eps * (sigma_hat ^ 2 - sigmas[i] ^ 2) ^ 0.5
        end
        -- denoised = model(x, sigma_hat * s_in, **extra_args)
        local denoised = model(x, sigma_hat * s_in, o.extra_args)
        local d = to_d(x, sigma_hat, denoised)
        if o.callback ~= nil then
            o.callback({ x = x, i = i, sigma = sigmas[i], sigma_hat = sigma_hat,
                denoised = denoised })
        end
        local dt = sigmas[i + 1] - sigma_hat
        -- Euler method
        x = x + d * dt
    end
    return x
end)

-- the keyword defaults of the ancestral samplers:
-- extra_args=None, callback=None, disable=None, eta=1., s_noise=1., noise_sampler=None
local function ancestral_opts(opts, x)
    opts = opts or {}
    return { extra_args = opts.extra_args or {}, callback = opts.callback, disable = opts.disable,
        eta = opts.eta or 1, s_noise = opts.s_noise or 1,
        -- noise_sampler = default_noise_sampler(x) if noise_sampler is None else noise_sampler
        noise_sampler = opts.noise_sampler or default_noise_sampler(x) }
end

-- @torch.no_grad()
-- def sample_euler_ancestral(model, x, sigmas, extra_args=None, callback=None, disable=None,
--                            eta=1., s_noise=1., noise_sampler=None):
local sample_euler_ancestral = tide.no_grad()(function(model, x, sigmas, opts)
    local o = ancestral_opts(opts, x)
    local s_in = x:new_ones({ x.shape[1] })
    for i = 1, #sigmas - 1 do
        local denoised = model(x, sigmas[i] * s_in, o.extra_args)
        -- sigma_down, sigma_up = get_ancestral_step(sigmas[i], sigmas[i + 1], eta=eta)
        local sigma_down, sigma_up = get_ancestral_step(sigmas[i], sigmas[i + 1], o.eta)
        if o.callback ~= nil then
            o.callback({ x = x, i = i, sigma = sigmas[i], sigma_hat = sigmas[i],
                denoised = denoised })
        end
        local d = to_d(x, sigmas[i], denoised)
        -- Euler method
        local dt = sigma_down - sigmas[i]
        x = x + d * dt
        -- if sigmas[i + 1] > 0:
        if sigmas[i + 1]:item() > 0 then
            -- x = x + noise_sampler(sigmas[i], sigmas[i + 1]) * s_noise * sigma_up
            x = x + o.noise_sampler(sigmas[i], sigmas[i + 1]) * o.s_noise * sigma_up
        end
    end
    return x
end)

-- @torch.no_grad()
-- def sample_heun(model, x, sigmas, extra_args=None, callback=None, disable=None, s_churn=0.,
--                 s_tmin=0., s_tmax=float('inf'), s_noise=1.):
local sample_heun = tide.no_grad()(function(model, x, sigmas, opts)
    local o = churn_opts(opts)
    local s_in = x:new_ones({ x.shape[1] })
    for i = 1, #sigmas - 1 do
        local gamma = churn_gamma(o, sigmas, i)
        local eps = randn_like(x) * o.s_noise
        local sigma_hat = sigmas[i] * (gamma + 1)
        if gamma > 0 then
            x = x + eps * (sigma_hat ^ 2 - sigmas[i] ^ 2) ^ 0.5
        end
        local denoised = model(x, sigma_hat * s_in, o.extra_args)
        local d = to_d(x, sigma_hat, denoised)
        if o.callback ~= nil then
            o.callback({ x = x, i = i, sigma = sigmas[i], sigma_hat = sigma_hat,
                denoised = denoised })
        end
        local dt = sigmas[i + 1] - sigma_hat
        -- if sigmas[i + 1] == 0:
        if sigmas[i + 1]:item() == 0 then
            -- Euler method
            x = x + d * dt
        else
            -- Heun's method
            local x_2 = x + d * dt
            local denoised_2 = model(x_2, sigmas[i + 1] * s_in, o.extra_args)
            local d_2 = to_d(x_2, sigmas[i + 1], denoised_2)
            local d_prime = (d + d_2) / 2
            x = x + d_prime * dt
        end
    end
    return x
end)

-- @torch.no_grad()
-- def sample_dpm_2(model, x, sigmas, extra_args=None, callback=None, disable=None, s_churn=0.,
--                  s_tmin=0., s_tmax=float('inf'), s_noise=1.):
local sample_dpm_2 = tide.no_grad()(function(model, x, sigmas, opts)
    local o = churn_opts(opts)
    local s_in = x:new_ones({ x.shape[1] })
    for i = 1, #sigmas - 1 do
        local gamma = churn_gamma(o, sigmas, i)
        local eps = randn_like(x) * o.s_noise
        local sigma_hat = sigmas[i] * (gamma + 1)
        if gamma > 0 then
            x = x + eps * (sigma_hat ^ 2 - sigmas[i] ^ 2) ^ 0.5
        end
        local denoised = model(x, sigma_hat * s_in, o.extra_args)
        local d = to_d(x, sigma_hat, denoised)
        if o.callback ~= nil then
            o.callback({ x = x, i = i, sigma = sigmas[i], sigma_hat = sigma_hat,
                denoised = denoised })
        end
        if sigmas[i + 1]:item() == 0 then
            -- Euler method
            local dt = sigmas[i + 1] - sigma_hat
            x = x + d * dt
        else
            -- DPM-Solver-2
            -- sigma_mid = sigma_hat.log().lerp(sigmas[i + 1].log(), 0.5).exp()
            local sigma_mid = sigma_hat:log():lerp(sigmas[i + 1]:log(), 0.5):exp()
            local dt_1 = sigma_mid - sigma_hat
            local dt_2 = sigmas[i + 1] - sigma_hat
            local x_2 = x + d * dt_1
            local denoised_2 = model(x_2, sigma_mid * s_in, o.extra_args)
            local d_2 = to_d(x_2, sigma_mid, denoised_2)
            x = x + d_2 * dt_2
        end
    end
    return x
end)

-- @torch.no_grad()
-- def sample_dpm_2_ancestral(model, x, sigmas, extra_args=None, callback=None, disable=None,
--                            eta=1., s_noise=1., noise_sampler=None):
local sample_dpm_2_ancestral = tide.no_grad()(function(model, x, sigmas, opts)
    local o = ancestral_opts(opts, x)
    local s_in = x:new_ones({ x.shape[1] })
    for i = 1, #sigmas - 1 do
        local denoised = model(x, sigmas[i] * s_in, o.extra_args)
        local sigma_down, sigma_up = get_ancestral_step(sigmas[i], sigmas[i + 1], o.eta)
        if o.callback ~= nil then
            o.callback({ x = x, i = i, sigma = sigmas[i], sigma_hat = sigmas[i],
                denoised = denoised })
        end
        local d = to_d(x, sigmas[i], denoised)
        -- if sigma_down == 0:
        if sigma_down:item() == 0 then
            -- Euler method
            local dt = sigma_down - sigmas[i]
            x = x + d * dt
        else
            -- DPM-Solver-2
            -- sigma_mid = sigmas[i].log().lerp(sigma_down.log(), 0.5).exp()
            local sigma_mid = sigmas[i]:log():lerp(sigma_down:log(), 0.5):exp()
            local dt_1 = sigma_mid - sigmas[i]
            local dt_2 = sigma_down - sigmas[i]
            local x_2 = x + d * dt_1
            local denoised_2 = model(x_2, sigma_mid * s_in, o.extra_args)
            local d_2 = to_d(x_2, sigma_mid, denoised_2)
            x = x + d_2 * dt_2
            x = x + o.noise_sampler(sigmas[i], sigmas[i + 1]) * o.s_noise * sigma_up
        end
    end
    return x
end)

-- integrate.quad(fn, a, b, epsrel=1e-4)[0]
-- GAP: tide has no scipy.integrate.quad: 4-point Gauss-Legendre, exact for the polynomials
-- (degree <= 3) linear_multistep_coeff integrates; the check compares it with scipy's quad
local GL_X = { -0.8611363115940526, -0.3399810435848563, 0.3399810435848563, 0.8611363115940526 }
local GL_W = { 0.3478548451374538, 0.6521451548625461, 0.6521451548625461, 0.3478548451374538 }
local function quad(fn, a, b)
    local half, mid, s = (b - a) / 2, (a + b) / 2, 0
    for q = 1, 4 do s = s + GL_W[q] * fn(mid + half * GL_X[q]) end
    return s * half
end

-- def linear_multistep_coeff(order, t, i, j):
local function linear_multistep_coeff(order, t, i, j)
    -- if order - 1 > i:  (i 0-based there, 1-based here)
    if order - 1 > i - 1 then
        -- raise ValueError(f'Order {order} too high for step {i}')
        error(string.format("Order %d too high for step %d", order, i - 1))
    end
    local function fn(tau)
        local prod = 1
        -- for k in range(order):
        for k = 0, order - 1 do
            -- if j == k: continue
            if j ~= k then
                prod = prod * (tau - t[i - k]) / (t[i - j] - t[i - k])
            end
        end
        return prod
    end
    -- return integrate.quad(fn, t[i], t[i + 1], epsrel=1e-4)[0]
    return quad(fn, t[i], t[i + 1])
end

-- @torch.no_grad()
-- def sample_lms(model, x, sigmas, extra_args=None, callback=None, disable=None, order=4):
local sample_lms = tide.no_grad()(function(model, x, sigmas, opts)
    opts = opts or {}
    local extra_args, callback, order = opts.extra_args or {}, opts.callback, opts.order or 4
    local s_in = x:new_ones({ x.shape[1] })
    -- sigmas_cpu = sigmas.detach().cpu().numpy()
    local sigmas_cpu = sigmas:detach():cpu():tolist()
    local ds = {}
    for i = 1, #sigmas - 1 do
        local denoised = model(x, sigmas[i] * s_in, extra_args)
        local d = to_d(x, sigmas[i], denoised)
        -- ds.append(d)
        ds[#ds + 1] = d
        if #ds > order then
            -- ds.pop(0)
            table.remove(ds, 1)
        end
        if callback ~= nil then
            callback({ x = x, i = i, sigma = sigmas[i], sigma_hat = sigmas[i],
                denoised = denoised })
        end
        -- cur_order = min(i + 1, order)
        local cur_order = math.min(i, order)
        -- coeffs = [linear_multistep_coeff(cur_order, sigmas_cpu, i, j) for j in range(cur_order)]
        local coeffs = {}
        for j = 0, cur_order - 1 do
            coeffs[j + 1] = linear_multistep_coeff(cur_order, sigmas_cpu, i, j)
        end
        -- x = x + sum(coeff * d for coeff, d in zip(coeffs, reversed(ds)))
        local sum = 0
        for j = 1, #coeffs do sum = sum + coeffs[j] * ds[#ds + 1 - j] end
        x = x + sum
    end
    return x
end)

-- sigma_fn = lambda t: t.neg().exp()
local function sigma_fn(t) return t:neg():exp() end
-- t_fn = lambda sigma: sigma.log().neg()
local function t_fn(sigma) return sigma:log():neg() end

-- @torch.no_grad()
-- def sample_dpmpp_2s_ancestral(model, x, sigmas, extra_args=None, callback=None, disable=None,
--                               eta=1., s_noise=1., noise_sampler=None):
local sample_dpmpp_2s_ancestral = tide.no_grad()(function(model, x, sigmas, opts)
    local o = ancestral_opts(opts, x)
    local s_in = x:new_ones({ x.shape[1] })
    for i = 1, #sigmas - 1 do
        local denoised = model(x, sigmas[i] * s_in, o.extra_args)
        local sigma_down, sigma_up = get_ancestral_step(sigmas[i], sigmas[i + 1], o.eta)
        if o.callback ~= nil then
            o.callback({ x = x, i = i, sigma = sigmas[i], sigma_hat = sigmas[i],
                denoised = denoised })
        end
        if sigma_down:item() == 0 then
            -- Euler method
            local d = to_d(x, sigmas[i], denoised)
            local dt = sigma_down - sigmas[i]
            x = x + d * dt
        else
            -- DPM-Solver++(2S)
            local t, t_next = t_fn(sigmas[i]), t_fn(sigma_down)
            local r = 1 / 2
            local h = t_next - t
            local s = t + r * h
            -- x_2 = (sigma_fn(s) / sigma_fn(t)) * x - (-h * r).expm1() * denoised
            local x_2 = (sigma_fn(s) / sigma_fn(t)) * x - (-h * r):expm1() * denoised
            local denoised_2 = model(x_2, sigma_fn(s) * s_in, o.extra_args)
            -- x = (sigma_fn(t_next) / sigma_fn(t)) * x - (-h).expm1() * denoised_2
            x = (sigma_fn(t_next) / sigma_fn(t)) * x - (-h):expm1() * denoised_2
        end
        -- Noise addition
        if sigmas[i + 1]:item() > 0 then
            x = x + o.noise_sampler(sigmas[i], sigmas[i + 1]) * o.s_noise * sigma_up
        end
    end
    return x
end)

-- @torch.no_grad()
-- def sample_dpmpp_sde(model, x, sigmas, extra_args=None, callback=None, disable=None, eta=1.,
--                      s_noise=1., noise_sampler=None, r=1 / 2):
local sample_dpmpp_sde = tide.no_grad()(function(model, x, sigmas, opts)
    opts = opts or {}
    -- sigma_min, sigma_max = sigmas[sigmas > 0].min(), sigmas.max()
    local sigma_min, sigma_max = sigmas[sigmas:gt(0)]:min(), sigmas:max() -- luacheck: ignore
    -- noise_sampler = BrownianTreeNoiseSampler(x, sigma_min, sigma_max) if noise_sampler is None
    -- GAP: no torchsde: the caller passes noise_sampler
    if opts.noise_sampler == nil then
        error("sample_dpmpp_sde: tide has no torchsde BrownianTreeNoiseSampler; pass noise_sampler")
    end
    local o = ancestral_opts(opts, x)
    local r = opts.r or 1 / 2
    local s_in = x:new_ones({ x.shape[1] })
    for i = 1, #sigmas - 1 do
        local denoised = model(x, sigmas[i] * s_in, o.extra_args)
        if o.callback ~= nil then
            o.callback({ x = x, i = i, sigma = sigmas[i], sigma_hat = sigmas[i],
                denoised = denoised })
        end
        if sigmas[i + 1]:item() == 0 then
            -- Euler method
            local d = to_d(x, sigmas[i], denoised)
            local dt = sigmas[i + 1] - sigmas[i]
            x = x + d * dt
        else
            -- DPM-Solver++
            local t, t_next = t_fn(sigmas[i]), t_fn(sigmas[i + 1])
            local h = t_next - t
            local s = t + h * r
            local fac = 1 / (2 * r)

            -- Step 1
            local sd, su = get_ancestral_step(sigma_fn(t), sigma_fn(s), o.eta)
            local s_ = t_fn(sd)
            -- x_2 = (sigma_fn(s_) / sigma_fn(t)) * x - (t - s_).expm1() * denoised
            local x_2 = (sigma_fn(s_) / sigma_fn(t)) * x - (t - s_):expm1() * denoised
            x_2 = x_2 + o.noise_sampler(sigma_fn(t), sigma_fn(s)) * o.s_noise * su
            local denoised_2 = model(x_2, sigma_fn(s) * s_in, o.extra_args)

            -- Step 2
            sd, su = get_ancestral_step(sigma_fn(t), sigma_fn(t_next), o.eta)
            local t_next_ = t_fn(sd)
            local denoised_d = (1 - fac) * denoised + fac * denoised_2
            -- x = (sigma_fn(t_next_) / sigma_fn(t)) * x - (t - t_next_).expm1() * denoised_d
            x = (sigma_fn(t_next_) / sigma_fn(t)) * x - (t - t_next_):expm1() * denoised_d
            x = x + o.noise_sampler(sigma_fn(t), sigma_fn(t_next)) * o.s_noise * su
        end
    end
    return x
end)

-- @torch.no_grad()
-- def sample_dpmpp_2m(model, x, sigmas, extra_args=None, callback=None, disable=None):
local sample_dpmpp_2m = tide.no_grad()(function(model, x, sigmas, opts)
    opts = opts or {}
    local extra_args, callback = opts.extra_args or {}, opts.callback
    local s_in = x:new_ones({ x.shape[1] })
    local old_denoised = nil
    for i = 1, #sigmas - 1 do
        local denoised = model(x, sigmas[i] * s_in, extra_args)
        if callback ~= nil then
            callback({ x = x, i = i, sigma = sigmas[i], sigma_hat = sigmas[i],
                denoised = denoised })
        end
        local t, t_next = t_fn(sigmas[i]), t_fn(sigmas[i + 1])
        local h = t_next - t
        -- if old_denoised is None or sigmas[i + 1] == 0:
        if old_denoised == nil or sigmas[i + 1]:item() == 0 then
            x = (sigma_fn(t_next) / sigma_fn(t)) * x - (-h):expm1() * denoised
        else
            local h_last = t - t_fn(sigmas[i - 1])
            local r = h_last / h
            local denoised_d = (1 + 1 / (2 * r)) * denoised - (1 / (2 * r)) * old_denoised
            x = (sigma_fn(t_next) / sigma_fn(t)) * x - (-h):expm1() * denoised_d
        end
        old_denoised = denoised
    end
    return x
end)

---------------------------------------------------------------------------------------------
-- the check: PyTorch 1.13's values from the same model, sigmas and fixed noise
---------------------------------------------------------------------------------------------
-- k = torch.arange(96, dtype=torch.float32)
local k = tide.arange(0, 96, { dtype = "float32" })
-- x0 = torch.sin(k * 0.7 + 0.3).view(2, 3, 4, 4)
local x0 = tide.sin(k * 0.7 + 0.3):view(2, 3, 4, 4)
-- W = (torch.cos(torch.arange(81, dtype=torch.float32) * 0.5) * 0.05).view(3, 3, 3, 3)
local W = (tide.cos(tide.arange(0, 81, { dtype = "float32" }) * 0.5) * 0.05):view(3, 3, 3, 3)
-- def model(x, sigma):
local function model(x, sigma)
    -- return x / append_dims(1 + sigma ** 2, x.ndim) + F.conv2d(x, W, padding=1)
    return x / append_dims(1 + sigma ^ 2, x.ndim) + F.conv2d(x, W, { padding = 1 })
end
local counter = 0
-- def fixed_randn_like(x): torch.cos(k * (0.37 * n) + 1.1 * n).view(x.shape) * 1.3
local function fixed_randn_like(x)
    counter = counter + 1
    local n = counter
    return tide.cos(k * (0.37 * n) + 1.1 * n):view(x.shape) * 1.3
end

local function values(t) return t:detach():cpu():tolist() end

-- sum, sum of squares and f[::23] of the flattened result; the callback's (i, sigma,
-- sigma_hat, denoised.sum()) per call
local WANT = {
    euler = { { 6.33163834, 161.550247, -1.01905465, 0.935540676, -0.513969481, 0.028159827,
        0.539491117 }, 6, { 22.1797867, 10.3497887, 5.91139221, 6.17084503, 6.7369895,
        6.33163834 } },
    euler_ancestral = { { 6.87634945, 116.269012, -1.16018844, 1.03031397, -2.02033019,
        1.82136345, 0.12800242 }, 5, { 22.1797867, -0.0411154628, -0.242845654, 2.05815268,
        4.3246479, 6.87634945 } },
    heun = { { 5.32539034, 229.298615, -1.55722976, 1.11985242, -0.515025079, 0.575815201,
        0.702079177 }, 6, { 22.1797867, 10.5252209, 5.83333731, 5.70435047, 6.63728952,
        5.32539034 } },
    dpm_2 = { { 6.02991009, 195.853088, -1.279073, 0.949297845, -0.392112851, 0.240536809,
        0.739722192 }, 6, { 22.1797867, 10.4754782, 5.79049063, 5.62213135, 6.66275311,
        6.02991009 } },
    dpm_2_ancestral = { { 9.21666241, 245.332779, -1.46016002, 1.07445729, -1.70794439,
        1.66250598, 0.393094152 }, 5, { 22.1797867, 5.08604574, 1.47768903, 1.84079897,
        4.57350206, 9.21666241 } },
    lms = { { 6.30265665, 172.286102, -1.10637879, 0.937296987, -0.449501872, 0.100310445,
        0.616431594 }, 0, { 22.1797867, 10.3497887, 5.74290133, 5.79558134, 6.57599783,
        6.40791464 } },
    dpmpp_2s_ancestral = { { 10.432725, 149.608765, -1.28025746, 1.09734631, -1.81082964,
        1.73906398, 0.205246508 }, 5, { 22.1797867, 0.216305077, -0.158845365, 1.97783113,
        5.62847281, 10.432725 } },
    dpmpp_2m = { { 5.97895575, 131.491592, -0.858708203, 0.565490246, -0.0453645885,
        -0.143948436, 0.830863357 }, 0, { 22.1797867, 10.3497906, 5.55655861, 5.00838804,
        5.62267542, 5.97895575 } },
    dpmpp_sde = { { -1.71701586, 101.996841, -0.56393522, 0.983209491, -0.671817183,
        1.20732665, -0.875780225 }, 10, { 22.1797867, 5.31202507, 1.77068114, 0.937120199,
        0.0305299163, -1.71701586 } },
}
local KARRAS = { 10, 4.91811085, 2.23248672, 0.916425586, 0.330331922, 0.100000001, 0 }

describe("ported k-diffusion sampling.py", function()
    local sigmas, x
    before_each(function()
        randn_like = fixed_randn_like
        counter = 0
        -- sigmas = get_sigmas_karras(6, 0.1, 10.); x = x0 * sigmas[0]
        sigmas = get_sigmas_karras(6, 0.1, 10)
        x = x0 * sigmas[1]
    end)
    after_each(function() randn_like = tide.randn_like end)

    -- runs a sampler, compares its result, the noise draws and each callback call
    local function check(name, fn, opts)
        local want = WANT[name]
        local calls = {}
        counter = 0
        opts = opts or {}
        opts.callback = function(d)
            assert.is_false(tide.is_grad_enabled())
            calls[#calls + 1] = { d.i, d.sigma:item(), d.sigma_hat:item(),
                d.denoised:sum():item() }
        end
        local out = fn(model, x, sigmas, opts)
        assert.same({ 2, 3, 4, 4 }, out:size())
        local f = out:flatten()
        local got = { f:sum():item(), (f ^ 2):sum():item() }
        for p = 1, 96, 23 do got[#got + 1] = f[p]:item() end
        assert_close_list(want[1], got, 2e-5, name)
        assert.equal(want[2], counter)
        assert.equal(6, #calls)
        local dsum = {}
        for c = 1, #calls do
            assert.equal(c, calls[c][1])
            assert.near(KARRAS[c], calls[c][2], 1e-6 * KARRAS[c])
            dsum[c] = calls[c][4]
        end
        assert_close_list(want[3], dsum, 2e-5, name .. " callback denoised sums")
        return calls
    end

    it("builds PyTorch's sigma schedules and ancestral steps", function()
        assert_close_list(KARRAS, values(get_sigmas_karras(6, 0.1, 10)), 1e-6, "karras")
        assert_close_list({ 10, 3.98107147, 1.58489323, 0.630957305, 0.251188636, 0.099999994, 0 },
            values(get_sigmas_exponential(6, 0.1, 10)), 1e-6, "exponential")
        assert_close_list({ 10, 1.90546131, 0.524807513, 0.208929628, 0.120226428, 0.099999994,
            0 }, values(get_sigmas_polyexponential(6, 0.1, 10, 2)), 1e-6, "polyexponential")
        assert_close_list({ 152.166977, 25.1488457, 6.11166143, 2.03442931, 0.723806739,
            0.0104838433, 0 }, values(get_sigmas_vp(6)), 1e-6, "vp")
        local sd, su = get_ancestral_step(tide.tensor(2.0), tide.tensor(1.0), 0.5)
        assert_close_list({ 0.901387811, 0.433012694 }, { sd:item(), su:item() }, 1e-6, "step")
        local s0, u0 = get_ancestral_step(tide.tensor(2.0), tide.tensor(1.0), 0)
        assert.equal(1, s0:item())
        assert.equal(0, u0)
        assert.same({ 3, 1, 1 }, append_dims(tide.ones(3), 3):size())
        assert.has_error(function() append_dims(tide.ones(2, 2), 1) end,
            "input has 2 dims but target_dims is 1, which is less")
    end)

    it("computes scipy quad's linear multistep coefficients", function()
        local want = { -5.08188915, -3.39525953, 0.709635404, -1.78643634, 0.54854348,
            -0.0781682786, -0.799246364, 0.260465656, -0.0509132006, 0.00360020851,
            -0.301091834, 0.0837887661, -0.0138484674, 0.000819625818, -0.132881765,
            0.0378258596, -0.00519026444, 0.000246173413 }
        local sc, got = values(sigmas), {}
        for i = 1, 6 do
            for j = 0, math.min(i, 4) - 1 do
                got[#got + 1] = linear_multistep_coeff(math.min(i, 4), sc, i, j)
            end
        end
        assert_close_list(want, got, 1e-6, "lms coeffs")
        assert.has_error(function() linear_multistep_coeff(3, sc, 2, 0) end,
            "Order 3 too high for step 1")
    end)

    it("samples as PyTorch: euler (with and without churn) and euler_ancestral", function()
        check("euler", sample_euler)
        counter = 0
        -- the churned run: s_churn=1.0, s_tmin=0.5, s_tmax=5.0, s_noise=1.2
        local want = { 4.60098934, 226.254654, -1.96053827, 1.48856258, -1.78536153,
            0.640424609, -0.0813382715 }
        local hats = {}
        local out = sample_euler(model, x, sigmas, { s_churn = 1.0, s_tmin = 0.5, s_tmax = 5.0,
            s_noise = 1.2, callback = function(d) hats[#hats + 1] = d.sigma_hat:item() end })
        local f, got = out:flatten(), {}
        got[1], got[2] = f:sum():item(), (f ^ 2):sum():item()
        for p = 1, 96, 23 do got[#got + 1] = f[p]:item() end
        assert_close_list(want, got, 2e-5, "euler churn")
        assert_close_list({ 10, 5.73779583, 2.60456777, 1.0691632, 0.330331922, 0.100000001 },
            hats, 1e-6, "euler churn sigma_hat")
        check("euler_ancestral", sample_euler_ancestral)
    end)

    it("samples as PyTorch: heun (with churn), dpm_2, dpm_2_ancestral", function()
        check("heun", sample_heun)
        counter = 0
        local hats = {}
        local out = sample_heun(model, x, sigmas, { s_churn = 2.0,
            callback = function(d) hats[#hats + 1] = d.sigma_hat:item() end })
        assert_close_list({ 9.24189758, 240.269424 }, { out:sum():item(), (out ^ 2):sum():item() },
            2e-5, "heun churn")
        assert_close_list({ 13.333334, 6.55748129, 2.97664905, 1.22190082, 0.440442562,
            0.13333334 }, hats, 1e-6, "heun churn sigma_hat")
        check("dpm_2", sample_dpm_2)
        check("dpm_2_ancestral", sample_dpm_2_ancestral, { eta = 0.7 })
    end)

    it("samples as PyTorch: lms, dpmpp_2s_ancestral, dpmpp_2m, dpmpp_sde", function()
        check("lms", sample_lms)
        check("dpmpp_2s_ancestral", sample_dpmpp_2s_ancestral)
        check("dpmpp_2m", sample_dpmpp_2m)
        check("dpmpp_sde", sample_dpmpp_sde,
            { noise_sampler = function() return fixed_randn_like(x) end })
        assert.has_error(function() sample_dpmpp_sde(model, x, sigmas) end,
            "sample_dpmpp_sde: tide has no torchsde BrownianTreeNoiseSampler; pass noise_sampler")
    end)

    it("runs with tide's own randn_like under no_grad", function()
        randn_like = tide.randn_like
        tide.manual_seed(0)
        local xg = x:clone():requires_grad_()
        local out = sample_euler_ancestral(model, xg, sigmas)
        assert.is_false(out.requires_grad)
        assert.same({ 2, 3, 4, 4 }, out:size())
        for _, v in ipairs(values(out:flatten())) do ported.assert_finite(v, "sample") end
        assert.is_true(tide.is_grad_enabled())
    end)
end)
