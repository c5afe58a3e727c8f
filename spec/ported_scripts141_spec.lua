-- ported_scripts141_spec.lua — openai/guided-diffusion's diffusion maths:
-- guided_diffusion/gaussian_diffusion.py (get_named_beta_schedule linear and cosine,
-- betas_for_alpha_bar, GaussianDiffusion.__init__'s numpy arrays, q_mean_variance, q_sample,
-- q_posterior_mean_variance, p_mean_variance for ModelMeanType.EPSILON and
-- ModelVarType.LEARNED_RANGE, _predict_xstart_from_eps, _predict_eps_from_xstart,
-- _vb_terms_bpd, training_losses with LossType.MSE and the vb term, p_sample, ddim_sample with
-- eta, _extract_into_tensor), guided_diffusion/losses.py (normal_kl, approx_standard_normal_cdf,
-- discretized_gaussian_log_likelihood) and guided_diffusion/nn.py (timestep_embedding,
-- mean_flat), ported line for line at tiny sizes (50 timesteps, images 2 x 3 x 4 x 4). numpy's
-- float64 arrays are float64 tensors; the Python line stands above each Lua line that differs.
-- Timesteps stay 0-based diffusion steps (the model sees them); they index the 1-based schedule
-- tensors as t + 1. A Conv2d 3 -> 6 plus the timestep embedding per channel stands in for the
-- UNet. Reference numbers: PyTorch 1.13 running the original files on the same fixed inputs.
local tide = require("tide")
local nn = tide.nn
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

---------------------------------------------------------------------------------------------
-- guided_diffusion/nn.py
---------------------------------------------------------------------------------------------
-- def mean_flat(tensor):
local function mean_flat(tensor)
    -- return tensor.mean(dim=list(range(1, len(tensor.shape))))
    local dims = {}
    for d = 2, tensor.ndim do dims[#dims + 1] = d end
    return tensor:mean(dims)
end

-- def timestep_embedding(timesteps, dim, max_period=10000):
local function timestep_embedding(timesteps, dim, max_period)
    max_period = max_period or 10000
    -- half = dim // 2
    local half = math.floor(dim / 2)
    -- freqs = th.exp(
    --     -math.log(max_period) * th.arange(start=0, end=half, dtype=th.float32) / half
    -- ).to(device=timesteps.device)
    local freqs = tide.exp(
        -math.log(max_period) * tide.arange(0, half, { dtype = "float32" }) / half
    ):to(timesteps.device)
    -- args = timesteps[:, None].float() * freqs[None]
    local args = timesteps[{ {}, tide.newaxis }]:float() * freqs[{ tide.newaxis }]
    -- embedding = th.cat([th.cos(args), th.sin(args)], dim=-1)
    local embedding = tide.cat({ tide.cos(args), tide.sin(args) }, -1)
    if dim % 2 == 1 then
        -- embedding = th.cat([embedding, th.zeros_like(embedding[:, :1])], dim=-1)
        embedding = tide.cat({ embedding, tide.zeros_like(embedding[{ {}, { 1, 1 } }]) }, -1)
    end
    return embedding
end

---------------------------------------------------------------------------------------------
-- guided_diffusion/losses.py
---------------------------------------------------------------------------------------------
-- def normal_kl(mean1, logvar1, mean2, logvar2):
local function normal_kl(mean1, logvar1, mean2, logvar2)
    local tensor = nil
    -- for obj in (mean1, logvar1, mean2, logvar2):
    for _, obj in ipairs({ mean1, logvar1, mean2, logvar2 }) do
        -- if isinstance(obj, th.Tensor):
        if tide.is_tensor(obj) then
            tensor = obj
            break
        end
    end
    assert(tensor ~= nil, "at least one argument must be a Tensor")
    -- logvar1, logvar2 = [
    --     x if isinstance(x, th.Tensor) else th.tensor(x).to(tensor)
    --     for x in (logvar1, logvar2)
    -- ]
    local function as_tensor(x)
        if tide.is_tensor(x) then return x end
        return tide.tensor(x):to(tensor)
    end
    logvar1, logvar2 = as_tensor(logvar1), as_tensor(logvar2)
    return 0.5 * (
        -1.0
        + logvar2
        - logvar1
        + tide.exp(logvar1 - logvar2)
        + ((mean1 - mean2) ^ 2) * tide.exp(-logvar2)
    )
end

-- def approx_standard_normal_cdf(x):
local function approx_standard_normal_cdf(x)
    -- return 0.5 * (1.0 + th.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * th.pow(x, 3))))
    return 0.5 * (1.0 + tide.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * tide.pow(x, 3))))
end

-- def discretized_gaussian_log_likelihood(x, *, means, log_scales):
local function discretized_gaussian_log_likelihood(x, opts)
    local means, log_scales = opts.means, opts.log_scales
    -- assert x.shape == means.shape == log_scales.shape
    assert(x.shape == means.shape and means.shape == log_scales.shape)
    local centered_x = x - means
    local inv_stdv = tide.exp(-log_scales)
    local plus_in = inv_stdv * (centered_x + 1.0 / 255.0)
    local cdf_plus = approx_standard_normal_cdf(plus_in)
    local min_in = inv_stdv * (centered_x - 1.0 / 255.0)
    local cdf_min = approx_standard_normal_cdf(min_in)
    -- log_cdf_plus = th.log(cdf_plus.clamp(min=1e-12))
    local log_cdf_plus = tide.log(cdf_plus:clamp({ min = 1e-12 }))
    -- log_one_minus_cdf_min = th.log((1.0 - cdf_min).clamp(min=1e-12))
    local log_one_minus_cdf_min = tide.log((1.0 - cdf_min):clamp({ min = 1e-12 }))
    local cdf_delta = cdf_plus - cdf_min
    -- log_probs = th.where(
    --     x < -0.999,
    --     log_cdf_plus,
    --     th.where(x > 0.999, log_one_minus_cdf_min, th.log(cdf_delta.clamp(min=1e-12))),
    -- )
    local log_probs = tide.where(
        x:lt(-0.999),
        log_cdf_plus,
        tide.where(x:gt(0.999), log_one_minus_cdf_min, tide.log(cdf_delta:clamp({ min = 1e-12 })))
    )
    assert(log_probs.shape == x.shape)
    return log_probs
end

---------------------------------------------------------------------------------------------
-- guided_diffusion/gaussian_diffusion.py
---------------------------------------------------------------------------------------------
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

-- def get_named_beta_schedule(schedule_name, num_diffusion_timesteps):
local function get_named_beta_schedule(schedule_name, num_diffusion_timesteps)
    if schedule_name == "linear" then
        local scale = 1000 / num_diffusion_timesteps
        local beta_start = scale * 0.0001
        local beta_end = scale * 0.02
        -- return np.linspace(
        --     beta_start, beta_end, num_diffusion_timesteps, dtype=np.float64
        -- )
        return tide.linspace(beta_start, beta_end, num_diffusion_timesteps, { dtype = "float64" })
    elseif schedule_name == "cosine" then
        return betas_for_alpha_bar(
            num_diffusion_timesteps,
            -- lambda t: math.cos((t + 0.008) / 1.008 * math.pi / 2) ** 2,
            function(t) return math.cos((t + 0.008) / 1.008 * math.pi / 2) ^ 2 end
        )
    else
        -- raise NotImplementedError(f"unknown beta schedule: {schedule_name}")
        error("unknown beta schedule: " .. schedule_name)
    end
end

-- class ModelMeanType / ModelVarType / LossType (enum.Enum): the members this port uses
local ModelMeanType = { PREVIOUS_X = "PREVIOUS_X", START_X = "START_X", EPSILON = "EPSILON" }
local ModelVarType = { LEARNED = "LEARNED", FIXED_SMALL = "FIXED_SMALL",
    FIXED_LARGE = "FIXED_LARGE", LEARNED_RANGE = "LEARNED_RANGE" }
local LossType = { MSE = "MSE", RESCALED_MSE = "RESCALED_MSE", KL = "KL",
    RESCALED_KL = "RESCALED_KL" }

-- def _extract_into_tensor(arr, timesteps, broadcast_shape):
local function _extract_into_tensor(arr, timesteps, broadcast_shape)
    -- res = th.from_numpy(arr).to(device=timesteps.device)[timesteps].float()
    local res = arr:to(timesteps.device)[timesteps + 1]:float()
    -- while len(res.shape) < len(broadcast_shape):
    while #res.shape < #broadcast_shape do
        -- res = res[..., None]
        res = res[{ "...", tide.newaxis }]
    end
    return res:expand(broadcast_shape)
end

-- class GaussianDiffusion:
local GaussianDiffusion = ported.class("GaussianDiffusion")

-- def __init__(self, *, betas, model_mean_type, model_var_type, loss_type,
--              rescale_timesteps=False):
function GaussianDiffusion.new(opts)
    local self = setmetatable({}, GaussianDiffusion)
    self.model_mean_type = opts.model_mean_type
    self.model_var_type = opts.model_var_type
    self.loss_type = opts.loss_type
    self.rescale_timesteps = opts.rescale_timesteps or false

    -- Use float64 for accuracy.
    -- betas = np.array(betas, dtype=np.float64)
    local betas = opts.betas:to("float64")
    self.betas = betas
    -- assert len(betas.shape) == 1, "betas must be 1-D"
    assert(#betas.shape == 1, "betas must be 1-D")
    -- assert (betas > 0).all() and (betas <= 1).all()
    assert(betas:gt(0):all():item() and betas:le(1):all():item())

    -- self.num_timesteps = int(betas.shape[0])
    self.num_timesteps = betas.shape[1]

    local alphas = 1.0 - betas
    -- self.alphas_cumprod = np.cumprod(alphas, axis=0)
    self.alphas_cumprod = tide.cumprod(alphas, 1)
    -- self.alphas_cumprod_prev = np.append(1.0, self.alphas_cumprod[:-1])
    self.alphas_cumprod_prev = tide.cat({ tide.tensor({ 1.0 }, { dtype = "float64" }),
        self.alphas_cumprod[{ { 1, -2 } }] })
    -- self.alphas_cumprod_next = np.append(self.alphas_cumprod[1:], 0.0)
    self.alphas_cumprod_next = tide.cat({ self.alphas_cumprod[{ { 2, -1 } }],
        tide.tensor({ 0.0 }, { dtype = "float64" }) })
    -- assert self.alphas_cumprod_prev.shape == (self.num_timesteps,)
    assert(self.alphas_cumprod_prev.shape == tide.Size({ self.num_timesteps }))

    -- calculations for diffusion q(x_t | x_{t-1}) and others
    self.sqrt_alphas_cumprod = tide.sqrt(self.alphas_cumprod)
    self.sqrt_one_minus_alphas_cumprod = tide.sqrt(1.0 - self.alphas_cumprod)
    self.log_one_minus_alphas_cumprod = tide.log(1.0 - self.alphas_cumprod)
    self.sqrt_recip_alphas_cumprod = tide.sqrt(1.0 / self.alphas_cumprod)
    self.sqrt_recipm1_alphas_cumprod = tide.sqrt(1.0 / self.alphas_cumprod - 1)

    -- calculations for posterior q(x_{t-1} | x_t, x_0)
    self.posterior_variance = (
        betas * (1.0 - self.alphas_cumprod_prev) / (1.0 - self.alphas_cumprod)
    )
    -- log calculation clipped because the posterior variance is 0 at the
    -- beginning of the diffusion chain.
    -- self.posterior_log_variance_clipped = np.log(
    --     np.append(self.posterior_variance[1], self.posterior_variance[1:])
    -- )
    self.posterior_log_variance_clipped = tide.log(
        tide.cat({ self.posterior_variance[{ { 2, 2 } }], self.posterior_variance[{ { 2, -1 } }] })
    )
    self.posterior_mean_coef1 = (
        betas * tide.sqrt(self.alphas_cumprod_prev) / (1.0 - self.alphas_cumprod)
    )
    self.posterior_mean_coef2 = (
        (1.0 - self.alphas_cumprod_prev)
        * tide.sqrt(alphas)
        / (1.0 - self.alphas_cumprod)
    )
    return self
end

-- def q_mean_variance(self, x_start, t):
function GaussianDiffusion:q_mean_variance(x_start, t)
    local mean = (
        _extract_into_tensor(self.sqrt_alphas_cumprod, t, x_start.shape) * x_start
    )
    local variance = _extract_into_tensor(1.0 - self.alphas_cumprod, t, x_start.shape)
    local log_variance = _extract_into_tensor(
        self.log_one_minus_alphas_cumprod, t, x_start.shape
    )
    return mean, variance, log_variance
end

-- def q_sample(self, x_start, t, noise=None):
function GaussianDiffusion:q_sample(x_start, t, noise)
    if noise == nil then
        noise = tide.randn_like(x_start)
    end
    assert(noise.shape == x_start.shape)
    return (
        _extract_into_tensor(self.sqrt_alphas_cumprod, t, x_start.shape) * x_start
        + _extract_into_tensor(self.sqrt_one_minus_alphas_cumprod, t, x_start.shape)
        * noise
    )
end

-- def q_posterior_mean_variance(self, x_start, x_t, t):
function GaussianDiffusion:q_posterior_mean_variance(x_start, x_t, t)
    assert(x_start.shape == x_t.shape)
    local posterior_mean = (
        _extract_into_tensor(self.posterior_mean_coef1, t, x_t.shape) * x_start
        + _extract_into_tensor(self.posterior_mean_coef2, t, x_t.shape) * x_t
    )
    local posterior_variance = _extract_into_tensor(self.posterior_variance, t, x_t.shape)
    local posterior_log_variance_clipped = _extract_into_tensor(
        self.posterior_log_variance_clipped, t, x_t.shape
    )
    assert(posterior_mean.shape[1] == posterior_variance.shape[1]
        and posterior_variance.shape[1] == posterior_log_variance_clipped.shape[1]
        and posterior_log_variance_clipped.shape[1] == x_start.shape[1])
    return posterior_mean, posterior_variance, posterior_log_variance_clipped
end

-- def p_mean_variance(
--     self, model, x, t, clip_denoised=True, denoised_fn=None, model_kwargs=None
-- ):
function GaussianDiffusion:p_mean_variance(model, x, t, clip_denoised, denoised_fn)
    if clip_denoised == nil then clip_denoised = true end

    -- B, C = x.shape[:2]
    local B, C = x.shape[1], x.shape[2]
    -- assert t.shape == (B,)
    assert(t.shape == tide.Size({ B }))
    -- model_output = model(x, self._scale_timesteps(t), **model_kwargs)
    local model_output = model(x, self:_scale_timesteps(t))

    local model_variance, model_log_variance
    -- if self.model_var_type in [ModelVarType.LEARNED, ModelVarType.LEARNED_RANGE]:
    if self.model_var_type == ModelVarType.LEARNED_RANGE then
        -- assert model_output.shape == (B, C * 2, *x.shape[2:])
        assert(model_output.shape == tide.Size({ B, C * 2, x.shape[3], x.shape[4] }))
        -- model_output, model_var_values = th.split(model_output, C, dim=1)
        local model_var_values
        model_output, model_var_values = unpack(tide.split(model_output, C, 2))
        local min_log = _extract_into_tensor(
            self.posterior_log_variance_clipped, t, x.shape
        )
        -- max_log = _extract_into_tensor(np.log(self.betas), t, x.shape)
        local max_log = _extract_into_tensor(tide.log(self.betas), t, x.shape)
        -- The model_var_values is [-1, 1] for [min_var, max_var].
        local frac = (model_var_values + 1) / 2
        model_log_variance = frac * max_log + (1 - frac) * min_log
        model_variance = tide.exp(model_log_variance)
    else
        -- LEARNED, FIXED_LARGE and FIXED_SMALL are not ported (this port exercises LEARNED_RANGE)
        error("model_var_type " .. tostring(self.model_var_type) .. " is not ported")
    end

    -- def process_xstart(x):
    local function process_xstart(x_)
        if denoised_fn ~= nil then
            x_ = denoised_fn(x_)
        end
        if clip_denoised then
            return x_:clamp(-1, 1)
        end
        return x_
    end

    local pred_xstart, model_mean
    -- elif self.model_mean_type in [ModelMeanType.START_X, ModelMeanType.EPSILON]:
    if self.model_mean_type == ModelMeanType.EPSILON then
        pred_xstart = process_xstart(
            self:_predict_xstart_from_eps(x, t, model_output)
        )
        -- model_mean, _, _ = self.q_posterior_mean_variance(
        --     x_start=pred_xstart, x_t=x, t=t
        -- )
        model_mean = self:q_posterior_mean_variance(pred_xstart, x, t)
    else
        -- raise NotImplementedError(self.model_mean_type)
        error("NotImplementedError: " .. tostring(self.model_mean_type))
    end

    -- assert (
    --     model_mean.shape == model_log_variance.shape == pred_xstart.shape == x.shape
    -- )
    assert(model_mean.shape == model_log_variance.shape and pred_xstart.shape == x.shape
        and model_mean.shape == x.shape)
    return {
        mean = model_mean,
        variance = model_variance,
        log_variance = model_log_variance,
        pred_xstart = pred_xstart,
    }
end

-- def _predict_xstart_from_eps(self, x_t, t, eps):
function GaussianDiffusion:_predict_xstart_from_eps(x_t, t, eps)
    assert(x_t.shape == eps.shape)
    return (
        _extract_into_tensor(self.sqrt_recip_alphas_cumprod, t, x_t.shape) * x_t
        - _extract_into_tensor(self.sqrt_recipm1_alphas_cumprod, t, x_t.shape) * eps
    )
end

-- def _predict_eps_from_xstart(self, x_t, t, pred_xstart):
function GaussianDiffusion:_predict_eps_from_xstart(x_t, t, pred_xstart)
    return (
        _extract_into_tensor(self.sqrt_recip_alphas_cumprod, t, x_t.shape) * x_t
        - pred_xstart
    ) / _extract_into_tensor(self.sqrt_recipm1_alphas_cumprod, t, x_t.shape)
end

-- def _scale_timesteps(self, t):
function GaussianDiffusion:_scale_timesteps(t)
    if self.rescale_timesteps then
        -- return t.float() * (1000.0 / self.num_timesteps)
        return t:float() * (1000.0 / self.num_timesteps)
    end
    return t
end

-- def p_sample(self, model, x, t, clip_denoised=True, denoised_fn=None, cond_fn=None,
--              model_kwargs=None):
-- GAP: tide's randn_like draws are not PyTorch's sequence (docs/API.md says so); the extra
-- noise argument stands in for th.randn_like(x) so the step can be checked against PyTorch
function GaussianDiffusion:p_sample(model, x, t, clip_denoised, noise)
    local out = self:p_mean_variance(model, x, t, clip_denoised)
    -- noise = th.randn_like(x)
    noise = noise or tide.randn_like(x)
    -- nonzero_mask = (
    --     (t != 0).float().view(-1, *([1] * (len(x.shape) - 1)))
    -- )  # no noise when t == 0
    local ones = {}
    for i = 1, #x.shape - 1 do ones[i] = 1 end
    local nonzero_mask = t:ne(0):float():view(-1, unpack(ones))
    local sample = out.mean + nonzero_mask * tide.exp(0.5 * out.log_variance) * noise
    return { sample = sample, pred_xstart = out.pred_xstart }
end

-- def ddim_sample(self, model, x, t, clip_denoised=True, denoised_fn=None, cond_fn=None,
--                 model_kwargs=None, eta=0.0):
-- (noise: the same test hook as p_sample's)
function GaussianDiffusion:ddim_sample(model, x, t, clip_denoised, eta, noise)
    eta = eta or 0.0
    local out = self:p_mean_variance(model, x, t, clip_denoised)
    -- Usually our model outputs epsilon, but we re-derive it
    -- in case we used x_start or x_prev prediction.
    local eps = self:_predict_eps_from_xstart(x, t, out.pred_xstart)

    local alpha_bar = _extract_into_tensor(self.alphas_cumprod, t, x.shape)
    local alpha_bar_prev = _extract_into_tensor(self.alphas_cumprod_prev, t, x.shape)
    local sigma = (
        eta
        * tide.sqrt((1 - alpha_bar_prev) / (1 - alpha_bar))
        * tide.sqrt(1 - alpha_bar / alpha_bar_prev)
    )
    -- Equation 12.
    -- noise = th.randn_like(x)
    noise = noise or tide.randn_like(x)
    local mean_pred = (
        out.pred_xstart * tide.sqrt(alpha_bar_prev)
        + tide.sqrt(1 - alpha_bar_prev - sigma ^ 2) * eps
    )
    local ones = {}
    for i = 1, #x.shape - 1 do ones[i] = 1 end
    -- nonzero_mask = (t != 0).float().view(-1, *([1] * (len(x.shape) - 1)))
    local nonzero_mask = t:ne(0):float():view(-1, unpack(ones))
    local sample = mean_pred + nonzero_mask * sigma * noise
    return { sample = sample, pred_xstart = out.pred_xstart }
end

-- def _vb_terms_bpd(self, model, x_start, x_t, t, clip_denoised=True, model_kwargs=None):
function GaussianDiffusion:_vb_terms_bpd(model, x_start, x_t, t, clip_denoised)
    -- true_mean, _, true_log_variance_clipped = self.q_posterior_mean_variance(
    --     x_start=x_start, x_t=x_t, t=t
    -- )
    local true_mean, _, true_log_variance_clipped = self:q_posterior_mean_variance(
        x_start, x_t, t
    )
    local out = self:p_mean_variance(model, x_t, t, clip_denoised)
    local kl = normal_kl(
        true_mean, true_log_variance_clipped, out.mean, out.log_variance
    )
    -- kl = mean_flat(kl) / np.log(2.0)
    kl = mean_flat(kl) / math.log(2.0)

    -- decoder_nll = -discretized_gaussian_log_likelihood(
    --     x_start, means=out["mean"], log_scales=0.5 * out["log_variance"]
    -- )
    local decoder_nll = -discretized_gaussian_log_likelihood(
        x_start, { means = out.mean, log_scales = 0.5 * out.log_variance }
    )
    assert(decoder_nll.shape == x_start.shape)
    decoder_nll = mean_flat(decoder_nll) / math.log(2.0)

    -- At the first timestep return the decoder NLL,
    -- otherwise return KL(q(x_{t-1}|x_t,x_0) || p(x_{t-1}|x_t))
    -- output = th.where((t == 0), decoder_nll, kl)
    local output = tide.where(t:eq(0), decoder_nll, kl)
    return { output = output, pred_xstart = out.pred_xstart }
end

-- def training_losses(self, model, x_start, t, model_kwargs=None, noise=None):
function GaussianDiffusion:training_losses(model, x_start, t, noise)
    if noise == nil then
        noise = tide.randn_like(x_start)
    end
    local x_t = self:q_sample(x_start, t, noise)

    local terms = {}

    -- elif self.loss_type == LossType.MSE or self.loss_type == LossType.RESCALED_MSE:
    if self.loss_type == LossType.MSE or self.loss_type == LossType.RESCALED_MSE then
        local model_output = model(x_t, self:_scale_timesteps(t))

        if self.model_var_type == ModelVarType.LEARNED
            or self.model_var_type == ModelVarType.LEARNED_RANGE then
            local B, C = x_t.shape[1], x_t.shape[2]
            assert(model_output.shape == tide.Size({ B, C * 2, x_t.shape[3], x_t.shape[4] }))
            -- model_output, model_var_values = th.split(model_output, C, dim=1)
            local model_var_values
            model_output, model_var_values = unpack(tide.split(model_output, C, 2))
            -- Learn the variance using the variational bound, but don't let
            -- it affect our mean prediction.
            -- frozen_out = th.cat([model_output.detach(), model_var_values], dim=1)
            local frozen_out = tide.cat({ model_output:detach(), model_var_values }, 2)
            -- terms["vb"] = self._vb_terms_bpd(
            --     model=lambda *args, r=frozen_out: r,
            --     x_start=x_start, x_t=x_t, t=t, clip_denoised=False,
            -- )["output"]
            terms.vb = self:_vb_terms_bpd(
                function() return frozen_out end,
                x_start, x_t, t, false
            ).output
            if self.loss_type == LossType.RESCALED_MSE then
                -- Divide by 1000 for equivalence with initial implementation.
                -- terms["vb"] *= self.num_timesteps / 1000.0
                terms.vb = terms.vb * (self.num_timesteps / 1000.0)
            end
        end

        -- target = {...}[self.model_mean_type]
        local target = ({
            [ModelMeanType.START_X] = x_start,
            [ModelMeanType.EPSILON] = noise,
        })[self.model_mean_type]
        -- assert model_output.shape == target.shape == x_start.shape
        assert(model_output.shape == target.shape and target.shape == x_start.shape)
        -- terms["mse"] = mean_flat((target - model_output) ** 2)
        terms.mse = mean_flat((target - model_output) ^ 2)
        -- if "vb" in terms:
        if terms.vb ~= nil then
            terms.loss = terms.mse + terms.vb
        else
            terms.loss = terms.mse
        end
    else
        -- LossType.KL and RESCALED_KL are not ported (this port exercises MSE with vb)
        error("NotImplementedError: " .. tostring(self.loss_type))
    end

    return terms
end

---------------------------------------------------------------------------------------------
-- The stand-in model and the fixed inputs (the same formulas in the PyTorch reference)
---------------------------------------------------------------------------------------------
local Tiny = nn.Module:extend("Tiny")
function Tiny:init()
    self.conv = nn.Conv2d(3, 6, 3, { padding = 1 })
    tide.no_grad(function()
        self.conv.weight:copy_(
            (0.2 * tide.sin(tide.arange(0, 162):float() * 0.13 + 0.5)):view(6, 3, 3, 3))
        self.conv.bias:copy_(0.05 * tide.cos(tide.arange(0, 6):float()))
    end)
end
-- return self.conv(x) + timestep_embedding(ts, 6)[:, :, None, None]
function Tiny:forward(x, ts)
    return self.conv(x) + timestep_embedding(ts, 6)[{ {}, {}, tide.newaxis, tide.newaxis }]
end

local T = 50
local function inputs()
    local r = tide.arange(0, 96):float()
    -- (1.3 * th.sin(th.arange(96) * 0.37)).clamp(-1, 1).view(2, 3, 4, 4): hits both edges
    local x_start = (1.3 * tide.sin(r * 0.37)):clamp(-1, 1):view(2, 3, 4, 4)
    local noise = tide.cos(r * 0.53):view(2, 3, 4, 4)
    local noise2 = tide.sin(r * 0.71 + 0.3):view(2, 3, 4, 4)
    local t = tide.tensor({ 0, 37 }, { dtype = "int64" })
    return x_start, noise, noise2, t
end

local function diffusion()
    return GaussianDiffusion.new({
        betas = get_named_beta_schedule("cosine", T),
        model_mean_type = ModelMeanType.EPSILON,
        model_var_type = ModelVarType.LEARNED_RANGE,
        loss_type = LossType.MSE,
    })
end

-- {sum, sum of |x|, first, last} of a tensor against PyTorch's, as the reference prints them
local function check(want, x, tol, what)
    local f = x:detach():double():flatten()
    local got = { f:sum():item(), f:abs():sum():item(), f[1]:item(), f[-1]:item() }
    ported.assert_close_list(want, got, tol, what)
end

local function check2(want, x, tol, what)
    ported.assert_close_list(want, { x[1]:item(), x[2]:item() }, tol, what)
end

describe("openai/guided-diffusion gaussian_diffusion.py", function()
    it("beta schedules and the posterior arrays match numpy's (float64)", function()
        local lin = get_named_beta_schedule("linear", T)
        local cos = get_named_beta_schedule("cosine", T)
        assert.are.equal("float64", lin.dtype)
        assert.are.equal("float64", cos.dtype)
        check({ 10.05, 10.05, 0.002, 0.4 }, lin, 1e-12, "linear")
        check({ 6.537902164, 6.537902164, 0.001747513534, 0.999 }, cos, 1e-9, "cosine")
        assert.is_true(ported.close(cos[25]:item(), 0.0593536642923, 1e-11))
        local D = diffusion()
        assert.are.equal(T, D.num_timesteps)
        local want = {
            alphas_cumprod = { 24.3039412, 24.3039412, 0.9982524865, 9.711930299e-07 },
            alphas_cumprod_prev = { 25.30394023, 25.30394023, 1, 0.0009711930299 },
            alphas_cumprod_next = { 23.30568872, 23.30568872, 0.9945699782, 0 },
            posterior_variance = { 6.370161092, 6.370161092, 0, 0.9980307474 },
            posterior_log_variance_clipped = { -148.228122, 148.228122, -6.736161335,
                -0.001971194083 },
            posterior_mean_coef1 = { 7.454224001, 7.454224001, 1, 0.03113283633 },
            posterior_mean_coef2 = { 39.80523176, 39.80523176, 0, 0.03159209546 },
            sqrt_recipm1_alphas_cumprod = { 1144.498875, 1144.498875, 0.04183984564,
                1014.721847 },
        }
        for k, v in pairs(want) do
            assert.are.equal("float64", D[k].dtype)
            check(v, D[k], 1e-8, k)
        end
    end)

    it("q_sample, p_mean_variance, the vb terms and the losses match PyTorch", function()
        local D = diffusion()
        local model = Tiny()
        local x_start, noise, _, t = inputs()
        check({ 5.041537814, 6.620748065, 1, 0.07962969691 }, timestep_embedding(t, 6), 1e-5,
            "timestep_embedding")
        local mean, var, logvar = D:q_mean_variance(x_start, t)
        assert.are.equal("float32", mean.dtype)
        check({ 3.418472229, 47.96095723, 0, -0.2652393878 }, mean, 1e-5, "q_mean")
        check({ 41.67613052, 41.67613052, 0.001747513539, 0.8665052056 }, var, 1e-5, "q_var")
        check({ -311.656723, 311.656723, -6.349561214, -0.1432871819 }, logvar, 1e-5, "q_logvar")
        local x_t = D:q_sample(x_start, t, noise)
        check({ 3.976217553, 63.60472561, 0.04180327058, 0.6623005867 }, x_t, 1e-5, "x_t")
        tide.no_grad(function()
            local pmv = D:p_mean_variance(model, x_t, t, true)
            check({ 0.6708668806, 61.19668505, -0.01939371228, 0.5659760833 }, pmv.mean,
                1e-4, "mean")
            check({ 6.760276251, 6.760276251, 0.001438551699, 0.1387554109 }, pmv.variance,
                1e-4, "variance")
            check({ -408.4945602, 408.4945602, -6.544118404, -1.975042582 }, pmv.log_variance,
                1e-4, "log_variance")
            check({ -21.82683433, 75.19461576, -0.01939371228, -0.5048521757 },
                pmv.pred_xstart, 1e-4, "pred_xstart")
            local vb = D:_vb_terms_bpd(model, x_start, x_t, t, false)
            check2({ 3.90520215, 0.1756673753 }, vb.output, 1e-4, "vb output")
            local terms = D:training_losses(model, x_start, t, noise)
            check2({ 2.140881777, 1.271083951 }, terms.mse, 1e-4, "mse")
            check2({ 3.90520215, 0.1756673753 }, terms.vb, 1e-4, "vb")
            check2({ 6.046083927, 1.446751356 }, terms.loss, 1e-4, "loss")
        end)
    end)

    it("one p_sample and one ddim_sample (eta = 0.5) step with fixed noise", function()
        local D = diffusion()
        local model = Tiny()
        local x_start, noise, noise2, t = inputs()
        local x_t = D:q_sample(x_start, t, noise)
        tide.no_grad(function()
            local ps = D:p_sample(model, x_t, t, true, noise2)
            check({ -0.07903314754, 61.51310466, -0.01939371228, 0.2013345659 }, ps.sample,
                1e-4, "p_sample")
            check({ -21.82683433, 75.19461576, -0.01939371228, -0.5048521757 },
                ps.pred_xstart, 1e-4, "p_sample pred_xstart")
            local dd = D:ddim_sample(model, x_t, t, true, 0.5, noise2)
            check({ 0.9251605608, 62.37542829, -0.01939371228, 0.4383944869 }, dd.sample,
                1e-4, "ddim_sample")
        end)
    end)

    it("2 Adam steps of training_losses: PyTorch's losses, finite and falling", function()
        local D = diffusion()
        local model = Tiny()
        local x_start, noise, _, t = inputs()
        local opt = optim.Adam(model:parameters(), { lr = 1e-2 })
        local ls = {}
        for _ = 1, 2 do
            local terms = D:training_losses(model, x_start, t, noise)
            local loss = terms.loss:mean()
            opt:zero_grad()
            loss:backward()
            opt:step()
            ls[#ls + 1] = loss:item()
            assert_finite(ls[#ls], "loss")
        end
        local after = D:training_losses(model, x_start, t, noise).loss:mean():item()
        ls[#ls + 1] = after
        ported.assert_close_list({ 3.746417522, 3.53071475, 3.333154917 }, ls, 1e-4, "losses")
        assert.is_true(ls[3] < ls[2] and ls[2] < ls[1])
    end)
end)

