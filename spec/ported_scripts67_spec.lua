-- ported_scripts67_spec.lua — AntixK/PyTorch-VAE's models/types_.py, base.py (BaseVAE),
-- vanilla_vae.py (VanillaVAE), beta_vae.py (BetaVAE, loss_type 'H' and 'B'), vq_vae.py
-- (VectorQuantizer, ResidualLayer, VQVAE) and cat_vae.py (CategoricalVAE), ported line for line
-- at tiny sizes (3 channels, 16x16 images, latent_dim 4, hidden_dims {4, 8, 16} or {8, 16}),
-- then experiment.py's training_step (loss['loss']) for 2 Adam steps on random images.
-- The Python line stands above each Lua line that differs from it. Dims and indices are 1-based.
-- The value checks compare with PyTorch 1.13 for the same weights (a sine of each parameter's
-- index in named_parameters order) and the same noise (randn_like / rand_like replaced by a
-- fixed tensor in both, for the value check only).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list
local close = ported.close

-- models/types_.py:
-- from typing import List, Callable, Union, Any, TypeVar, Tuple
-- Tensor = TypeVar('torch.tensor')
-- (Lua has no type hints: the annotations below stay in the Python comments)

---------------------------------------------------------------------------------------------
-- models/base.py
---------------------------------------------------------------------------------------------
-- class BaseVAE(nn.Module):
local BaseVAE = nn.Module:extend("BaseVAE")
-- def __init__(self) -> None: super(BaseVAE, self).__init__()
function BaseVAE:init() end -- luacheck: ignore
-- def encode(self, input: Tensor) -> List[Tensor]: raise NotImplementedError
function BaseVAE:encode(input) error("NotImplementedError") end -- luacheck: ignore
function BaseVAE:decode(input) error("NotImplementedError") end -- luacheck: ignore
-- def sample(self, batch_size:int, current_device: int, **kwargs) -> Tensor:
function BaseVAE:sample(batch_size, current_device, kwargs) -- luacheck: ignore
    error("NotImplementedError")
end
function BaseVAE:generate(x, kwargs) error("NotImplementedError") end -- luacheck: ignore
-- @abstractmethod def forward(self, *inputs: Tensor) -> Tensor: pass
-- @abstractmethod def loss_function(self, *inputs: Any, **kwargs) -> Tensor: pass

-- the encoder / decoder shared by VanillaVAE, BetaVAE and CategoricalVAE (each file repeats it)
-- for h_dim in hidden_dims:
--     modules.append(nn.Sequential(nn.Conv2d(in_channels, out_channels=h_dim, kernel_size= 3,
--         stride= 2, padding  = 1), nn.BatchNorm2d(h_dim), nn.LeakyReLU()))
--     in_channels = h_dim
-- self.encoder = nn.Sequential(*modules)
local function build_encoder(in_channels, hidden_dims)
    local modules = {}
    for _, h_dim in ipairs(hidden_dims) do
        modules[#modules + 1] = nn.Sequential(
            nn.Conv2d(in_channels, h_dim, { kernel_size = 3, stride = 2, padding = 1 }),
            nn.BatchNorm2d(h_dim),
            nn.LeakyReLU())
        in_channels = h_dim
    end
    return nn.Sequential(unpack(modules))
end

-- hidden_dims.reverse()
-- for i in range(len(hidden_dims) - 1):
--     modules.append(nn.Sequential(nn.ConvTranspose2d(hidden_dims[i], hidden_dims[i + 1],
--         kernel_size=3, stride = 2, padding=1, output_padding=1),
--         nn.BatchNorm2d(hidden_dims[i + 1]), nn.LeakyReLU()))
-- self.decoder = nn.Sequential(*modules)
-- self.final_layer = nn.Sequential(nn.ConvTranspose2d(hidden_dims[-1], hidden_dims[-1],
--     kernel_size=3, stride=2, padding=1, output_padding=1), nn.BatchNorm2d(hidden_dims[-1]),
--     nn.LeakyReLU(), nn.Conv2d(hidden_dims[-1], out_channels= 3, kernel_size= 3, padding= 1),
--     nn.Tanh())
local function build_decoder(self, hidden_dims)
    local rev = {}
    for i = #hidden_dims, 1, -1 do rev[#rev + 1] = hidden_dims[i] end
    hidden_dims = rev
    local modules = {}
    for i = 1, #hidden_dims - 1 do
        modules[#modules + 1] = nn.Sequential(
            nn.ConvTranspose2d(hidden_dims[i], hidden_dims[i + 1],
                { kernel_size = 3, stride = 2, padding = 1, output_padding = 1 }),
            nn.BatchNorm2d(hidden_dims[i + 1]),
            nn.LeakyReLU())
    end
    self.decoder = nn.Sequential(unpack(modules))
    self.final_layer = nn.Sequential(
        nn.ConvTranspose2d(hidden_dims[#hidden_dims], hidden_dims[#hidden_dims],
            { kernel_size = 3, stride = 2, padding = 1, output_padding = 1 }),
        nn.BatchNorm2d(hidden_dims[#hidden_dims]),
        nn.LeakyReLU(),
        nn.Conv2d(hidden_dims[#hidden_dims], 3, { kernel_size = 3, padding = 1 }),
        nn.Tanh())
end

---------------------------------------------------------------------------------------------
-- models/vanilla_vae.py
---------------------------------------------------------------------------------------------
-- class VanillaVAE(BaseVAE):
local VanillaVAE = BaseVAE:extend("VanillaVAE")
-- def __init__(self, in_channels: int, latent_dim: int, hidden_dims: List = None, **kwargs):
function VanillaVAE:init(in_channels, latent_dim, hidden_dims)
    BaseVAE.init(self)
    self.latent_dim = latent_dim
    if hidden_dims == nil then
        hidden_dims = { 32, 64, 128, 256, 512 }
    end
    -- Build Encoder
    self.encoder = build_encoder(in_channels, hidden_dims)
    -- self.fc_mu = nn.Linear(hidden_dims[-1]*4, latent_dim)
    self.fc_mu = nn.Linear(hidden_dims[#hidden_dims] * 4, latent_dim)
    self.fc_var = nn.Linear(hidden_dims[#hidden_dims] * 4, latent_dim)
    -- Build Decoder
    self.decoder_input = nn.Linear(latent_dim, hidden_dims[#hidden_dims] * 4)
    -- the decode's view(-1, 512, 2, 2) hard-codes the default hidden_dims[-1]; kept here
    self.last_dim = hidden_dims[#hidden_dims]
    build_decoder(self, hidden_dims)
end

function VanillaVAE:encode(input)
    local result = self.encoder(input)
    -- result = torch.flatten(result, start_dim=1)
    result = tide.flatten(result, 2)
    -- Split the result into mu and var components of the latent Gaussian distribution
    local mu = self.fc_mu(result)
    local log_var = self.fc_var(result)
    return { mu, log_var }
end

function VanillaVAE:decode(z)
    local result = self.decoder_input(z)
    -- result = result.view(-1, 512, 2, 2)   (512: the default hidden_dims[-1])
    result = result:view(-1, self.last_dim, 2, 2)
    result = self.decoder(result)
    result = self.final_layer(result)
    return result
end

-- def reparameterize(self, mu: Tensor, logvar: Tensor) -> Tensor:
function VanillaVAE:reparameterize(mu, logvar) -- luacheck: ignore
    local std = tide.exp(0.5 * logvar)
    local eps = tide.randn_like(std)
    return eps * std + mu
end

-- def forward(self, input: Tensor, **kwargs) -> List[Tensor]:
function VanillaVAE:forward(input)
    -- mu, log_var = self.encode(input)
    local mu, log_var = unpack(self:encode(input))
    local z = self:reparameterize(mu, log_var)
    return { self:decode(z), input, mu, log_var }
end

-- def loss_function(self, *args, **kwargs) -> dict:
function VanillaVAE:loss_function(args, kwargs) -- luacheck: ignore
    -- recons = args[0]; input = args[1]; mu = args[2]; log_var = args[3]
    local recons, input, mu, log_var = args[1], args[2], args[3], args[4]
    -- kld_weight = kwargs['M_N'] # Account for the minibatch samples from the dataset
    local kld_weight = kwargs["M_N"]
    local recons_loss = F.mse_loss(recons, input)
    -- kld_loss = torch.mean(-0.5 * torch.sum(1 + log_var - mu ** 2 - log_var.exp(), dim = 1),
    --     dim = 0)
    local kld_loss = tide.mean(-0.5 * tide.sum(1 + log_var - mu ^ 2 - log_var:exp(),
        { dim = 2 }), { dim = 1 })
    local loss = recons_loss + kld_weight * kld_loss
    -- return {'loss': loss, 'Reconstruction_Loss':recons_loss.detach(), 'KLD':-kld_loss.detach()}
    return { loss = loss, Reconstruction_Loss = recons_loss:detach(), KLD = -kld_loss:detach() }
end

-- def sample(self, num_samples:int, current_device: int, **kwargs) -> Tensor:
function VanillaVAE:sample(num_samples, current_device)
    -- z = torch.randn(num_samples, self.latent_dim)
    local z = tide.randn(num_samples, self.latent_dim)
    z = z:to(current_device)
    local samples = self:decode(z)
    return samples
end

-- def generate(self, x: Tensor, **kwargs) -> Tensor: return self.forward(x)[0]
function VanillaVAE:generate(x)
    return self:forward(x)[1]
end

---------------------------------------------------------------------------------------------
-- models/beta_vae.py (encode, decode, reparameterize, forward, sample, generate are
-- vanilla_vae.py's, line for line)
---------------------------------------------------------------------------------------------
-- class BetaVAE(BaseVAE):
local BetaVAE = BaseVAE:extend("BetaVAE")
-- num_iter = 0 # Global static variable to keep track of iterations
BetaVAE.num_iter = 0
-- def __init__(self, in_channels, latent_dim, hidden_dims = None, beta = 4, gamma = 1000.,
--     max_capacity = 25, Capacity_max_iter = 1e5, loss_type = 'B', **kwargs):
function BetaVAE:init(in_channels, latent_dim, hidden_dims, kwargs)
    kwargs = kwargs or {}
    BaseVAE.init(self)
    self.latent_dim = latent_dim
    self.beta = kwargs.beta or 4
    self.gamma = kwargs.gamma or 1000.
    self.loss_type = kwargs.loss_type or "B"
    -- self.C_max = torch.Tensor([max_capacity])
    self.C_max = tide.Tensor({ kwargs.max_capacity or 25 })
    self.C_stop_iter = kwargs.Capacity_max_iter or 1e5
    if hidden_dims == nil then
        hidden_dims = { 32, 64, 128, 256, 512 }
    end
    self.encoder = build_encoder(in_channels, hidden_dims)
    self.fc_mu = nn.Linear(hidden_dims[#hidden_dims] * 4, latent_dim)
    self.fc_var = nn.Linear(hidden_dims[#hidden_dims] * 4, latent_dim)
    self.decoder_input = nn.Linear(latent_dim, hidden_dims[#hidden_dims] * 4)
    self.last_dim = hidden_dims[#hidden_dims]
    build_decoder(self, hidden_dims)
end
BetaVAE.encode = VanillaVAE.encode
BetaVAE.decode = VanillaVAE.decode
BetaVAE.reparameterize = VanillaVAE.reparameterize
BetaVAE.forward = VanillaVAE.forward
BetaVAE.sample = VanillaVAE.sample
BetaVAE.generate = VanillaVAE.generate

function BetaVAE:loss_function(args, kwargs)
    -- self.num_iter += 1
    self.num_iter = self.num_iter + 1
    local recons, input, mu, log_var = args[1], args[2], args[3], args[4]
    local kld_weight = kwargs["M_N"] -- Account for the minibatch samples from the dataset
    local recons_loss = F.mse_loss(recons, input)
    local kld_loss = tide.mean(-0.5 * tide.sum(1 + log_var - mu ^ 2 - log_var:exp(),
        { dim = 2 }), { dim = 1 })
    local loss
    if self.loss_type == "H" then -- https://openreview.net/forum?id=Sy2fzU9gl
        loss = recons_loss + self.beta * kld_weight * kld_loss
    elseif self.loss_type == "B" then -- https://arxiv.org/pdf/1804.03599.pdf
        self.C_max = self.C_max:to(input.device)
        -- C = torch.clamp(self.C_max/self.C_stop_iter * self.num_iter, 0, self.C_max.data[0])
        local C = tide.clamp(self.C_max / self.C_stop_iter * self.num_iter, 0, self.C_max.data[1])
        loss = recons_loss + self.gamma * kld_weight * (kld_loss - C):abs()
    else
        error("ValueError: Undefined loss type.")
    end
    return { loss = loss, Reconstruction_Loss = recons_loss, KLD = kld_loss }
end

---------------------------------------------------------------------------------------------
-- models/vq_vae.py
---------------------------------------------------------------------------------------------
-- class VectorQuantizer(nn.Module):
local VectorQuantizer = nn.Module:extend("VectorQuantizer")
-- def __init__(self, num_embeddings: int, embedding_dim: int, beta: float = 0.25):
function VectorQuantizer:init(num_embeddings, embedding_dim, beta)
    self.K = num_embeddings
    self.D = embedding_dim
    self.beta = beta or 0.25
    self.embedding = nn.Embedding(self.K, self.D)
    self.embedding.weight.data:uniform_(-1 / self.K, 1 / self.K)
end

-- def forward(self, latents: Tensor) -> Tensor:
function VectorQuantizer:forward(latents)
    -- latents = latents.permute(0, 2, 3, 1).contiguous()  # [B x D x H x W] -> [B x H x W x D]
    latents = latents:permute(1, 3, 4, 2):contiguous()
    local latents_shape = latents.shape
    local flat_latents = latents:view(-1, self.D) -- [BHW x D]
    -- Compute L2 distance between latents and embedding weights
    -- dist = torch.sum(flat_latents ** 2, dim=1, keepdim=True) + \
    --        torch.sum(self.embedding.weight ** 2, dim=1) - \
    --        2 * torch.matmul(flat_latents, self.embedding.weight.t())  # [BHW x K]
    local dist = tide.sum(flat_latents ^ 2, { dim = 2, keepdim = true }) +
        tide.sum(self.embedding.weight ^ 2, { dim = 2 }) -
        2 * tide.matmul(flat_latents, self.embedding.weight:t())
    -- Get the encoding that has the min distance
    -- encoding_inds = torch.argmin(dist, dim=1).unsqueeze(1)  # [BHW, 1]
    local encoding_inds = tide.argmin(dist, { dim = 2 }):unsqueeze(2)
    -- Convert to one-hot encodings
    local device = latents.device
    -- encoding_one_hot = torch.zeros(encoding_inds.size(0), self.K, device=device)
    local encoding_one_hot = tide.zeros(encoding_inds:size(1), self.K, { device = device })
    -- encoding_one_hot.scatter_(1, encoding_inds, 1)  # [BHW x K]
    encoding_one_hot:scatter_(2, encoding_inds, 1)
    -- Quantize the latents
    local quantized_latents = tide.matmul(encoding_one_hot, self.embedding.weight) -- [BHW, D]
    quantized_latents = quantized_latents:view(latents_shape) -- [B x H x W x D]
    -- Compute the VQ Losses
    local commitment_loss = F.mse_loss(quantized_latents:detach(), latents)
    local embedding_loss = F.mse_loss(quantized_latents, latents:detach())
    local vq_loss = commitment_loss * self.beta + embedding_loss
    -- Add the residue back to the latents
    quantized_latents = latents + (quantized_latents - latents):detach()
    -- return quantized_latents.permute(0, 3, 1, 2).contiguous(), vq_loss  # [B x D x H x W]
    -- (the one-hot and indices also go to the spec's checks, in self.last)
    self.last = { inds = encoding_inds, one_hot = encoding_one_hot,
        commitment = commitment_loss, embedding = embedding_loss }
    return quantized_latents:permute(1, 4, 2, 3):contiguous(), vq_loss
end

-- class ResidualLayer(nn.Module):
local ResidualLayer = nn.Module:extend("ResidualLayer")
function ResidualLayer:init(in_channels, out_channels)
    -- self.resblock = nn.Sequential(nn.Conv2d(in_channels, out_channels, kernel_size=3,
    --     padding=1, bias=False), nn.ReLU(True),
    --     nn.Conv2d(out_channels, out_channels, kernel_size=1, bias=False))
    self.resblock = nn.Sequential(
        nn.Conv2d(in_channels, out_channels, { kernel_size = 3, padding = 1, bias = false }),
        nn.ReLU(true),
        nn.Conv2d(out_channels, out_channels, { kernel_size = 1, bias = false }))
end

function ResidualLayer:forward(input)
    return input + self.resblock(input)
end

-- class VQVAE(BaseVAE):
local VQVAE = BaseVAE:extend("VQVAE")
-- def __init__(self, in_channels, embedding_dim, num_embeddings, hidden_dims = None,
--     beta = 0.25, img_size = 64, **kwargs):
function VQVAE:init(in_channels, embedding_dim, num_embeddings, hidden_dims, beta, img_size)
    BaseVAE.init(self)
    self.embedding_dim = embedding_dim
    self.num_embeddings = num_embeddings
    self.img_size = img_size or 64
    self.beta = beta or 0.25
    local modules = {}
    if hidden_dims == nil then
        hidden_dims = { 128, 256 }
    end
    -- Build Encoder
    for _, h_dim in ipairs(hidden_dims) do
        modules[#modules + 1] = nn.Sequential(
            nn.Conv2d(in_channels, h_dim, { kernel_size = 4, stride = 2, padding = 1 }),
            nn.LeakyReLU())
        in_channels = h_dim
    end
    modules[#modules + 1] = nn.Sequential(
        nn.Conv2d(in_channels, in_channels, { kernel_size = 3, stride = 1, padding = 1 }),
        nn.LeakyReLU())
    -- for _ in range(6):
    for _ = 1, 6 do
        modules[#modules + 1] = ResidualLayer(in_channels, in_channels)
    end
    modules[#modules + 1] = nn.LeakyReLU()
    modules[#modules + 1] = nn.Sequential(
        nn.Conv2d(in_channels, embedding_dim, { kernel_size = 1, stride = 1 }),
        nn.LeakyReLU())
    self.encoder = nn.Sequential(unpack(modules))
    self.vq_layer = VectorQuantizer(num_embeddings, embedding_dim, self.beta)
    -- Build Decoder
    local last = hidden_dims[#hidden_dims]
    modules = {}
    -- nn.Conv2d(embedding_dim, hidden_dims[-1], kernel_size=3, stride=1, padding=1)
    modules[#modules + 1] = nn.Sequential(
        nn.Conv2d(embedding_dim, last, { kernel_size = 3, stride = 1, padding = 1 }),
        nn.LeakyReLU())
    for _ = 1, 6 do
        modules[#modules + 1] = ResidualLayer(last, last)
    end
    modules[#modules + 1] = nn.LeakyReLU()
    -- hidden_dims.reverse()
    local rev = {}
    for i = #hidden_dims, 1, -1 do rev[#rev + 1] = hidden_dims[i] end
    hidden_dims = rev
    for i = 1, #hidden_dims - 1 do
        modules[#modules + 1] = nn.Sequential(
            nn.ConvTranspose2d(hidden_dims[i], hidden_dims[i + 1],
                { kernel_size = 4, stride = 2, padding = 1 }),
            nn.LeakyReLU())
    end
    modules[#modules + 1] = nn.Sequential(
        nn.ConvTranspose2d(hidden_dims[#hidden_dims], 3,
            { kernel_size = 4, stride = 2, padding = 1 }),
        nn.Tanh())
    self.decoder = nn.Sequential(unpack(modules))
end

function VQVAE:encode(input)
    local result = self.encoder(input)
    return { result }
end

function VQVAE:decode(z)
    local result = self.decoder(z)
    return result
end

function VQVAE:forward(input)
    -- encoding = self.encode(input)[0]
    local encoding = self:encode(input)[1]
    local quantized_inputs, vq_loss = self.vq_layer(encoding)
    return { self:decode(quantized_inputs), input, vq_loss }
end

function VQVAE:loss_function(args)
    local recons, input, vq_loss = args[1], args[2], args[3]
    local recons_loss = F.mse_loss(recons, input)
    local loss = recons_loss + vq_loss
    return { loss = loss, Reconstruction_Loss = recons_loss, VQ_Loss = vq_loss }
end

function VQVAE:sample() -- luacheck: ignore
    -- raise Warning('VQVAE sampler is not implemented.')
    error("Warning: VQVAE sampler is not implemented.")
end

function VQVAE:generate(x)
    return self:forward(x)[1]
end

---------------------------------------------------------------------------------------------
-- models/cat_vae.py
---------------------------------------------------------------------------------------------
-- class CategoricalVAE(BaseVAE):
local CategoricalVAE = BaseVAE:extend("CategoricalVAE")
-- def __init__(self, in_channels, latent_dim, categorical_dim = 40, hidden_dims = None,
--     temperature = 0.5, anneal_rate = 3e-5, anneal_interval = 100, alpha = 30., **kwargs):
function CategoricalVAE:init(in_channels, latent_dim, categorical_dim, hidden_dims, kwargs)
    kwargs = kwargs or {}
    BaseVAE.init(self)
    self.latent_dim = latent_dim
    self.categorical_dim = categorical_dim or 40
    self.temp = kwargs.temperature or 0.5
    self.min_temp = kwargs.temperature or 0.5
    self.anneal_rate = kwargs.anneal_rate or 3e-5
    self.anneal_interval = kwargs.anneal_interval or 100 -- every 100 batches
    self.alpha = kwargs.alpha or 30.
    if hidden_dims == nil then
        hidden_dims = { 32, 64, 128, 256, 512 }
    end
    self.encoder = build_encoder(in_channels, hidden_dims)
    -- self.fc_z = nn.Linear(hidden_dims[-1]*4, self.latent_dim * self.categorical_dim)
    self.fc_z = nn.Linear(hidden_dims[#hidden_dims] * 4, self.latent_dim * self.categorical_dim)
    self.decoder_input = nn.Linear(self.latent_dim * self.categorical_dim,
        hidden_dims[#hidden_dims] * 4)
    self.last_dim = hidden_dims[#hidden_dims]
    build_decoder(self, hidden_dims)
    -- self.sampling_dist = torch.distributions.OneHotCategorical(1. / categorical_dim *
    --     torch.ones((self.categorical_dim, 1)))
    self.sampling_dist = tide.distributions.OneHotCategorical(1. / self.categorical_dim *
        tide.ones({ self.categorical_dim, 1 }))
end

function CategoricalVAE:encode(input)
    local result = self.encoder(input)
    result = tide.flatten(result, 2)
    local z = self.fc_z(result)
    z = z:view(-1, self.latent_dim, self.categorical_dim)
    return { z }
end

CategoricalVAE.decode = VanillaVAE.decode

-- def reparameterize(self, z: Tensor, eps:float = 1e-7) -> Tensor:
function CategoricalVAE:reparameterize(z, eps)
    eps = eps or 1e-7
    -- Sample from Gumbel
    local u = tide.rand_like(z)
    -- g = - torch.log(- torch.log(u + eps) + eps)
    local g = -tide.log(-tide.log(u + eps) + eps)
    -- Gumbel-Softmax sample
    -- s = F.softmax((z + g) / self.temp, dim=-1)
    local s = F.softmax((z + g) / self.temp, { dim = -1 })
    s = s:view(-1, self.latent_dim * self.categorical_dim)
    return s
end

function CategoricalVAE:forward(input)
    local q = self:encode(input)[1]
    local z = self:reparameterize(q)
    return { self:decode(z), input, q }
end

function CategoricalVAE:loss_function(args, kwargs)
    local recons, input, q = args[1], args[2], args[3]
    -- q_p = F.softmax(q, dim=-1) # Convert the categorical codes into probabilities
    local q_p = F.softmax(q, { dim = -1 })
    local kld_weight = kwargs["M_N"]
    local batch_idx = kwargs["batch_idx"]
    -- Anneal the temperature at regular intervals
    if batch_idx % self.anneal_interval == 0 and self.training then
        -- self.temp = np.maximum(self.temp * np.exp(- self.anneal_rate * batch_idx),
        --     self.min_temp)
        self.temp = math.max(self.temp * math.exp(-self.anneal_rate * batch_idx), self.min_temp)
    end
    -- recons_loss =F.mse_loss(recons, input, reduction='mean')
    local recons_loss = F.mse_loss(recons, input, { reduction = "mean" })
    -- KL divergence between gumbel-softmax distribution
    local eps = 1e-7
    -- Entropy of the logits
    local h1 = q_p * tide.log(q_p + eps)
    -- Cross entropy with the categorical distribution
    -- h2 = q_p * np.log(1. / self.categorical_dim + eps)
    local h2 = q_p * math.log(1. / self.categorical_dim + eps)
    -- kld_loss = torch.mean(torch.sum(h1 - h2, dim =(1,2)), dim=0)
    local kld_loss = tide.mean(tide.sum(h1 - h2, { dim = { 2, 3 } }), { dim = 1 })
    local loss = self.alpha * recons_loss + kld_weight * kld_loss
    return { loss = loss, Reconstruction_Loss = recons_loss, KLD = -kld_loss }
end

function CategoricalVAE:sample(num_samples, current_device)
    -- [S x D x Q]
    local M = num_samples * self.latent_dim
    -- np_y = np.zeros((M, self.categorical_dim), dtype=np.float32)
    -- np_y[range(M), np.random.choice(self.categorical_dim, M)] = 1
    local np_y = tide.zeros(M, self.categorical_dim)
    np_y:scatter_(2, tide.randint(1, self.categorical_dim + 1, { M, 1 }), 1)
    -- np_y = np.reshape(np_y, [M // self.latent_dim, self.latent_dim, self.categorical_dim])
    np_y = tide.reshape(np_y,
        { math.floor(M / self.latent_dim), self.latent_dim, self.categorical_dim })
    local z = np_y
    -- z = z.view(num_samples, self.latent_dim * self.categorical_dim).to(current_device)
    z = z:view(num_samples, self.latent_dim * self.categorical_dim):to(current_device)
    local samples = self:decode(z)
    return samples
end

function CategoricalVAE:generate(x)
    return self:forward(x)[1]
end

---------------------------------------------------------------------------------------------
-- checks
---------------------------------------------------------------------------------------------
-- for i, (n, p) in enumerate(m.named_parameters()):
--     p.copy_((torch.sin(torch.arange(p.numel()) * 0.37 + i) * 0.2).reshape(p.shape))
local function det(m)
    tide.no_grad(function()
        for i, np in ipairs(m:named_parameters()) do
            local p = np[2]
            p:copy_((tide.sin(tide.arange(0, p:numel()) * 0.37 + (i - 1)) * 0.2):reshape(p.shape))
        end
    end)
end

-- x = torch.sin(torch.arange(2*3*16*16) * 0.1).reshape(2, 3, 16, 16)
local function det_x()
    return tide.sin(tide.arange(0, 2 * 3 * 16 * 16) * 0.1):reshape(2, 3, 16, 16)
end

-- the fixed noise of the value check: PyTorch's torch.randn_like / torch.rand_like replaced by
-- these in both (EPS = cos(arange(8) * 0.5).reshape(2, 4),
-- U = (sin(arange(40) * 0.3) * 0.45 + 0.5).reshape(2, 4, 5)); restored after f
local function with_fixed_noise(f)
    local randn_like, rand_like = tide.randn_like, tide.rand_like
    tide.randn_like = function() return tide.cos(tide.arange(0, 8) * 0.5):reshape(2, 4) end
    tide.rand_like = function()
        return (tide.sin(tide.arange(0, 40) * 0.3) * 0.45 + 0.5):reshape(2, 4, 5)
    end
    local ok, err = pcall(f)
    tide.randn_like, tide.rand_like = randn_like, rand_like
    assert(ok, err)
end

local function list(t)
    return t:flatten():tolist()
end

local function head(t, n)
    local l, out = list(t), {}
    for i = 1, n do out[i] = l[i] end
    return out
end

-- experiment.py's training_step for 2 Adam steps (lr 0.005, its configs' LR) on random images:
-- results = self.forward(real_img, labels = labels)
-- train_loss = self.model.loss_function(*results, M_N = self.params['kld_weight'], ...,
--     batch_idx = batch_idx)
-- return train_loss['loss']
local function train(model, kwargs, steps)
    tide.manual_seed(0)
    local real_img = tide.rand(2, 3, 16, 16) * 2 - 1
    local opt = optim.Adam(model:parameters(), { lr = 0.005 })
    local losses = {}
    for batch_idx = 0, steps do
        kwargs.batch_idx = batch_idx
        opt:zero_grad()
        local results = model(real_img)
        local train_loss = model:loss_function(results, kwargs)
        local loss = train_loss["loss"]
        losses[#losses + 1] = loss:item()
        assert_finite(losses[#losses], "loss")
        if batch_idx < steps then
            loss:backward()
            opt:step()
        end
    end
    assert.is_true(losses[#losses] < losses[1], string.format("loss %.6g -> %.6g",
        losses[1], losses[#losses]))
    return losses
end

describe("AntixK/PyTorch-VAE base.py / vanilla_vae.py / beta_vae.py", function()
    it("BaseVAE's methods raise NotImplementedError", function()
        local b = BaseVAE()
        local ok, err = pcall(function() return b:encode(tide.zeros(1)) end)
        assert.is_false(ok)
        assert.matches("NotImplementedError", err, 1, true)
    end)

    it("VanillaVAE: shapes, forward and loss match PyTorch, sample, generate, trains", function()
        local m = VanillaVAE(3, 4, { 4, 8, 16 })
        det(m)
        assert.are.equal(32, #m:parameters())
        assert.are.equal("encoder.1.1.weight", m:named_parameters()[1][1])
        local x = det_x()
        with_fixed_noise(function()
            local out = m(x)
            assert.are.same({ 2, 3, 16, 16 }, out[1]:size())
            assert.are.same({ 2, 4 }, out[3]:size())
            assert_close_list({ -0.0806317, -0.081261, -0.0804664, -0.080936, -0.0799883,
                -0.0808966 }, head(out[1], 6), 1e-4, "recons")
            assert.is_true(close(out[1]:sum():item(), -15.058899879455566, 1e-4))
            assert_close_list({ -0.0472184, 0.2115601, 0.3316045, 0.1670103, 0.2010348,
                0.050669, 0.0454513, 0.2604945 }, list(out[3]), 1e-4, "mu")
            assert_close_list({ 0.1086374, -0.0892843, -0.0216387, 0.0737504, 0.1794249,
                0.2223404, -0.0190191, -0.2372571 }, list(out[4]), 1e-4, "log_var")
            local l = m:loss_function(out, { M_N = 0.5 })
            assert.is_true(close(l.loss:item(), 0.5533921718597412, 1e-5))
            assert.is_true(close(l.Reconstruction_Loss:item(), 0.5057993531227112, 1e-5))
            assert.is_true(close(l.KLD:item(), -0.09518569707870483, 1e-4))
            assert.is_false(l.KLD.requires_grad)
        end)
        assert.are.same({ 3, 3, 16, 16 }, m:sample(3, "cpu"):size())
        assert.are.same({ 2, 3, 16, 16 }, m:generate(x):size())
        train(m, { M_N = 0.5 }, 2)
    end)

    it("BetaVAE: loss_type 'H' and 'B' (num_iter, C_max clamp) match PyTorch, train", function()
        local x = det_x()
        -- PyTorch: loss_type 'H' 0.6961707..., 'B' (Capacity_max_iter 10) 1202.91..., 2452.91...
        local want = { H = { 0.6961707472801208, 0.6961707472801208 },
            B = { 1202.9129638671875, 2452.9130859375 } }
        for _, lt in ipairs({ "H", "B" }) do
            local m = BetaVAE(3, 4, { 4, 8, 16 }, { loss_type = lt, Capacity_max_iter = 10 })
            det(m)
            with_fixed_noise(function()
                local out = m(x)
                assert_close_list({ -0.0472184, 0.2115601, 0.3316045, 0.1670103 },
                    head(out[3], 4), 1e-4, "mu")
                for it = 1, 2 do
                    local l = m:loss_function(out, { M_N = 0.5 })
                    assert.is_true(close(l.loss:item(), want[lt][it], 1e-5),
                        lt .. " " .. l.loss:item())
                    assert.is_true(close(l.KLD:item(), 0.09518569707870483, 1e-4))
                end
            end)
            -- the counter is the instance's; the class's stays 0 (Python's self.num_iter += 1)
            assert.are.equal(2, m.num_iter)
            assert.are.equal(0, BetaVAE.num_iter)
            -- training with the default Capacity_max_iter (1e5: C barely moves over 3 steps)
            train(BetaVAE(3, 4, { 4, 8, 16 }, { loss_type = lt }), { M_N = 0.5 }, 2)
        end
        local bad = BetaVAE(3, 4, { 4, 8, 16 }, { loss_type = "Z" })
        local ok, err = pcall(function() return bad:loss_function(bad(x), { M_N = 1 }) end)
        assert.is_false(ok)
        assert.matches("Undefined loss type", err, 1, true)
    end)
end)

describe("AntixK/PyTorch-VAE vq_vae.py", function()
    it("VectorQuantizer: uniform_ init, indices, one-hot, losses, straight-through", function()
        local vq = VectorQuantizer(6, 4)
        local w = vq.embedding.weight
        assert.is_true(w:abs():max():item() <= 1 / 6 + 1e-7)
        assert.is_true(w:max():item() > 0 and w:min():item() < 0)
        assert.is_true(w.requires_grad)
        tide.manual_seed(1)
        local lat = tide.randn(2, 4, 3, 3, { requires_grad = true })
        local q, vq_loss = vq(lat)
        assert.are.same({ 2, 4, 3, 3 }, q:size())
        local inds, one_hot = vq.last.inds, vq.last.one_hot
        assert.are.same({ 18, 1 }, inds:size())
        -- one-hot rows: a single 1 at the argmin
        assert.are.same(tide.ones(18):tolist(), one_hot:sum(2):tolist())
        local flat = lat:permute(1, 3, 4, 2):reshape(-1, 4)
        local d = tide.cdist(flat, w)
        assert.are.same(tide.argmin(d, 2):tolist(), inds:squeeze(2):tolist())
        assert.are.same(inds:squeeze(2):tolist(), tide.argmax(one_hot, 2):tolist())
        -- the forward value is the chosen codes; losses: commitment * beta + embedding, equal
        local want = w:index_select(1, inds:squeeze(2)):view(2, 3, 3, 4):permute(1, 4, 2, 3)
        assert.is_true(tide.allclose(q, want, 1e-6, 1e-6))
        local c, e = vq.last.commitment:item(), vq.last.embedding:item()
        assert.is_true(close(c, e, 1e-6))
        assert.is_true(close(vq_loss:item(), 0.25 * c + e, 1e-6))
        -- straight-through: d(sum q)/d latents is 1 everywhere; the commitment term adds its own
        q:sum():backward()
        assert.is_true(tide.allclose(lat.grad, tide.ones_like(lat)))
        assert.is_nil(w.grad)
    end)

    it("VQVAE: forward, indices and loss match PyTorch, encoder grads flow, trains", function()
        local m = VQVAE(3, 4, 6, { 8, 16 })
        det(m)
        assert.are.equal(39, #m:parameters())
        local x = det_x()
        local out = m(x)
        assert.are.same({ 2, 3, 16, 16 }, out[1]:size())
        assert.are.same({ 1, 1, 1, 1, 3, 5, 5, 5, 1, 1, 1, 1, 5, 5, 5, 5, 1, 1, 3, 3, 5, 5, 5, 5,
            1, 1, 1, 3, 5, 5, 5, 5 }, m.vq_layer.last.inds:squeeze(2):tolist())
        assert_close_list({ 0.0689715, 0.0736561, 0.0992821, 0.0711746, 0.0945801, 0.0637966 },
            head(out[1], 6), 1e-4, "recons")
        assert.is_true(close(out[1]:sum():item(), 195.48741149902344, 1e-4))
        local l = m:loss_function(out)
        assert.is_true(close(l.VQ_Loss:item(), 574.6407470703125, 1e-4))
        assert.is_true(close(l.Reconstruction_Loss:item(), 0.5135701298713684, 1e-4))
        assert.is_true(close(l.loss:item(), 575.154296875, 1e-4))
        l.loss:backward()
        -- the straight-through estimator carries the decoder's gradient into the encoder
        local g = m.encoder[1][1].weight.grad
        assert.is_true(close(g:abs():sum():item(), 2892.442138671875, 1e-3))
        assert.are.same({ 2, 3, 16, 16 }, m:generate(x):size())
        local ok, err = pcall(function() return m:sample(2, "cpu") end)
        assert.is_false(ok)
        assert.matches("VQVAE sampler is not implemented", err, 1, true)
        train(VQVAE(3, 4, 6, { 8, 16 }), {}, 2)
    end)
end)

describe("AntixK/PyTorch-VAE cat_vae.py", function()
    it("CategoricalVAE: gumbel-softmax, KL, annealing match PyTorch, sample, trains", function()
        local m = CategoricalVAE(3, 4, 5, { 4, 8, 16 })
        det(m)
        local x = det_x()
        with_fixed_noise(function()
            local out = m(x)
            assert.are.same({ 2, 3, 16, 16 }, out[1]:size())
            assert.are.same({ 2, 4, 5 }, out[3]:size())
            assert_close_list({ -0.2759293, -0.2946111, -0.1811782, -0.0336265, 0.0198625,
                -0.1163434 }, head(out[1], 6), 1e-4, "recons")
            assert.is_true(close(out[1]:sum():item(), -365.7884826660156, 1e-4))
            assert_close_list({ -0.0472184, 0.2115601, 0.3316045, 0.1670103, 0.033435 },
                head(out[3], 5), 1e-4, "q")
            local l = m:loss_function(out, { M_N = 0.5, batch_idx = 0 })
            assert.is_true(close(l.loss:item(), 17.1436710357666, 1e-4))
            assert.is_true(close(l.Reconstruction_Loss:item(), 0.5708951354026794, 1e-4))
            assert.is_true(close(l.KLD:item(), -0.03363332152366638, 1e-4))
            assert.are.equal(0.5, m.temp)
            -- annealing: every anneal_interval batches, floored at min_temp
            m.temp, m.min_temp, m.anneal_interval = 1.0, 0.5, 2
            m:loss_function(out, { M_N = 0.5, batch_idx = 3 })
            assert.are.equal(1.0, m.temp)
            m:loss_function(out, { M_N = 0.5, batch_idx = 4 })
            assert.is_true(close(m.temp, 0.999880007199712, 1e-12))
        end)
        local s = m:sample(3, "cpu")
        assert.are.same({ 3, 3, 16, 16 }, s:size())
        -- sampling_dist (unused by sample, as in cat_vae.py): probs over a last dim of size 1
        local d = m.sampling_dist:sample({ 7 })
        assert.are.same({ 7, 5, 1 }, d:size())
        assert.are.same(tide.ones(7, 5, 1):tolist(), d:tolist())
        local cm = CategoricalVAE(3, 4, 5, { 4, 8, 16 })
        train(cm, { M_N = 0.5 }, 2)
    end)
end)
