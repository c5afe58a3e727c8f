-- ported_scripts142_spec.lua — descriptinc/descript-audio-codec: dac/nn/layers.py (WNConv1d,
-- WNConvTranspose1d through nn.utils.weight_norm, the scripted snake with its reshape and 1e-9
-- reciprocal, Snake1d), dac/nn/quantize.py (VectorQuantize: in_proj / out_proj, decode_latents
-- with F.normalize and the three-term distance, the commitment / codebook losses, the
-- straight-through estimator; ResidualVectorQuantize with quantizer_dropout, from_codes,
-- from_latents) and dac/model/dac.py's ResidualUnit, EncoderBlock and DecoderBlock, ported line
-- for line at tiny sizes (codebook_size 16, codebook_dim 4, input_dim 8, 3 codebooks, audio
-- 1 x 1 x 64) and checked against PyTorch 1.13 with the same weights. The Python line stands
-- above each Lua line that differs from it. Dims and codebook indices are 1-based: tide's codes
-- are PyTorch's plus one. The reference values come from these modules pasted into PyTorch 1.13
-- (einops' two rearranges written as permute / reshape there), weights set by det_init's formula.
-- No library gap was met: every line runs as written, the changes are Lua's (1-based dims and
-- indices, tide.lt for a tensor <, math.floor for // on Lua 5.1).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local einops = tide.einops

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local close = ported.close
local assert_close_list = ported.assert_close_list

---------------------------------------------------------------------------------------------
-- dac/nn/layers.py
---------------------------------------------------------------------------------------------
-- def WNConv1d(*args, **kwargs):
--     return weight_norm(nn.Conv1d(*args, **kwargs))
local function WNConv1d(...)
    return nn.utils.weight_norm(nn.Conv1d(...))
end

-- def WNConvTranspose1d(*args, **kwargs):
--     return weight_norm(nn.ConvTranspose1d(*args, **kwargs))
local function WNConvTranspose1d(...)
    return nn.utils.weight_norm(nn.ConvTranspose1d(...))
end

-- @torch.jit.script
-- def snake(x, alpha):
local function snake(x, alpha)
    -- shape = x.shape
    local shape = x.shape
    -- x = x.reshape(shape[0], shape[1], -1)
    x = x:reshape(shape[1], shape[2], -1)
    -- x = x + (alpha + 1e-9).reciprocal() * torch.sin(alpha * x).pow(2)
    x = x + (alpha + 1e-9):reciprocal() * tide.sin(alpha * x):pow(2)
    x = x:reshape(shape)
    return x
end

-- class Snake1d(nn.Module):
local Snake1d = nn.Module:extend("Snake1d")
function Snake1d:init(channels)
    -- self.alpha = nn.Parameter(torch.ones(1, channels, 1))
    self.alpha = nn.Parameter(tide.ones(1, channels, 1))
end

function Snake1d:forward(x)
    return snake(x, self.alpha)
end

---------------------------------------------------------------------------------------------
-- dac/nn/quantize.py
---------------------------------------------------------------------------------------------
-- class VectorQuantize(nn.Module):
local VectorQuantize = nn.Module:extend("VectorQuantize")
-- def __init__(self, input_dim: int, codebook_size: int, codebook_dim: int):
function VectorQuantize:init(input_dim, codebook_size, codebook_dim)
    self.codebook_size = codebook_size
    self.codebook_dim = codebook_dim

    -- self.in_proj = WNConv1d(input_dim, codebook_dim, kernel_size=1)
    self.in_proj = WNConv1d(input_dim, codebook_dim, 1)
    -- self.out_proj = WNConv1d(codebook_dim, input_dim, kernel_size=1)
    self.out_proj = WNConv1d(codebook_dim, input_dim, 1)
    self.codebook = nn.Embedding(codebook_size, codebook_dim)
end

function VectorQuantize:forward(z)
    -- Factorized codes (ViT-VQGAN) Project input into low-dimensional space
    -- z_e = self.in_proj(z)  # z_e : (B x D x T)
    local z_e = self.in_proj(z)
    -- z_q, indices = self.decode_latents(z_e)
    local z_q, indices = self:decode_latents(z_e)

    -- commitment_loss = F.mse_loss(z_e, z_q.detach(), reduction="none").mean([1, 2])
    local commitment_loss = F.mse_loss(z_e, z_q:detach(), { reduction = "none" }):mean({ 2, 3 })
    -- codebook_loss = F.mse_loss(z_q, z_e.detach(), reduction="none").mean([1, 2])
    local codebook_loss = F.mse_loss(z_q, z_e:detach(), { reduction = "none" }):mean({ 2, 3 })

    -- z_q = (
    --     z_e + (z_q - z_e).detach()
    -- )  # noop in forward pass, straight-through gradient estimator in backward pass
    z_q = z_e + (z_q - z_e):detach()

    z_q = self.out_proj(z_q)

    return z_q, commitment_loss, codebook_loss, indices, z_e
end

-- def embed_code(self, embed_id):
function VectorQuantize:embed_code(embed_id)
    -- return F.embedding(embed_id, self.codebook.weight)
    return F.embedding(embed_id, self.codebook.weight)
end

-- def decode_code(self, embed_id):
function VectorQuantize:decode_code(embed_id)
    -- return self.embed_code(embed_id).transpose(1, 2)
    return self:embed_code(embed_id):transpose(2, 3)
end

-- def decode_latents(self, latents):
function VectorQuantize:decode_latents(latents)
    -- encodings = rearrange(latents, "b d t -> (b t) d")
    local encodings = einops.rearrange(latents, "b d t -> (b t) d")
    local codebook = self.codebook.weight -- codebook: (N x D)

    -- L2 normalize encodings and codebook (ViT-VQGAN)
    encodings = F.normalize(encodings)
    codebook = F.normalize(codebook)

    -- Compute euclidean distance with codebook
    -- dist = (
    --     encodings.pow(2).sum(1, keepdim=True)
    --     - 2 * encodings @ codebook.t()
    --     + codebook.pow(2).sum(1, keepdim=True).t()
    -- )
    local dist = encodings:pow(2):sum(2, { keepdim = true })
        - 2 * encodings:matmul(codebook:t())
        + codebook:pow(2):sum(2, { keepdim = true }):t()
    -- indices = rearrange((-dist).max(1)[1], "(b t) -> b t", b=latents.size(0))
    local _, argmax = (-dist):max(2)
    local indices = einops.rearrange(argmax, "(b t) -> b t", { b = latents:size(1) })
    local z_q = self:decode_code(indices)
    return z_q, indices
end

-- class ResidualVectorQuantize(nn.Module):
local ResidualVectorQuantize = nn.Module:extend("ResidualVectorQuantize")
-- def __init__(self, input_dim: int = 512, n_codebooks: int = 9, codebook_size: int = 1024,
--              codebook_dim: Union[int, list] = 8, quantizer_dropout: float = 0.0):
function ResidualVectorQuantize:init(input_dim, n_codebooks, codebook_size, codebook_dim,
                                     quantizer_dropout)
    input_dim, n_codebooks = input_dim or 512, n_codebooks or 9
    codebook_size, codebook_dim = codebook_size or 1024, codebook_dim or 8
    -- if isinstance(codebook_dim, int):
    if type(codebook_dim) == "number" then
        -- codebook_dim = [codebook_dim for _ in range(n_codebooks)]
        local d = codebook_dim
        codebook_dim = {}
        for i = 1, n_codebooks do codebook_dim[i] = d end
    end

    self.n_codebooks = n_codebooks
    self.codebook_dim = codebook_dim
    self.codebook_size = codebook_size

    -- self.quantizers = nn.ModuleList([VectorQuantize(input_dim, codebook_size,
    --     codebook_dim[i]) for i in range(n_codebooks)])
    local qs = {}
    for i = 1, n_codebooks do
        qs[i] = VectorQuantize(input_dim, codebook_size, codebook_dim[i])
    end
    self.quantizers = nn.ModuleList(qs)
    self.quantizer_dropout = quantizer_dropout or 0.0
end

-- def forward(self, z, n_quantizers: int = None):
function ResidualVectorQuantize:forward(z, n_quantizers)
    local z_q = 0
    local residual = z
    local commitment_loss = 0
    local codebook_loss = 0

    local codebook_indices = {}
    local latents = {}

    if n_quantizers == nil then
        n_quantizers = self.n_codebooks
    end
    if self.training then
        -- n_quantizers = torch.ones((z.shape[0],)) * self.n_codebooks + 1
        n_quantizers = tide.ones({ z.shape[1] }) * self.n_codebooks + 1
        -- dropout = torch.randint(1, self.n_codebooks + 1, (z.shape[0],))
        local dropout = tide.randint(1, self.n_codebooks + 1, { z.shape[1] })
        -- n_dropout = int(z.shape[0] * self.quantizer_dropout)
        local n_dropout = math.floor(z.shape[1] * self.quantizer_dropout)
        -- n_quantizers[:n_dropout] = dropout[:n_dropout]
        n_quantizers[{ { 1, n_dropout } }] = dropout[{ { 1, n_dropout } }]
        -- n_quantizers = n_quantizers.to(z.device)
        n_quantizers = n_quantizers:to(z.device)
    end

    -- for i, quantizer in enumerate(self.quantizers):
    for i, quantizer in ipairs(self.quantizers) do
        -- if self.training is False and i >= n_quantizers:
        if self.training == false and i - 1 >= n_quantizers then
            break
        end

        -- z_q_i, commitment_loss_i, codebook_loss_i, indices_i, z_e_i = quantizer(residual)
        local z_q_i, commitment_loss_i, codebook_loss_i, indices_i, z_e_i = quantizer(residual)

        -- Create mask to apply quantizer dropout
        -- mask = (
        --     torch.full((z.shape[0],), fill_value=i, device=z.device) < n_quantizers
        -- )
        -- (Lua's < on tensors must give a boolean: tide.lt; i is 0-based in the mask)
        local mask = tide.lt(tide.full({ z.shape[1] }, i - 1, { device = z.device }),
            n_quantizers)
        -- z_q = z_q + z_q_i * mask[:, None, None]
        z_q = z_q + z_q_i * mask[{ {}, tide.newaxis, tide.newaxis }]
        residual = residual - z_q_i

        -- Sum losses
        -- commitment_loss += (commitment_loss_i * mask).mean()
        commitment_loss = commitment_loss + (commitment_loss_i * mask):mean()
        -- codebook_loss += (codebook_loss_i * mask).mean()
        codebook_loss = codebook_loss + (codebook_loss_i * mask):mean()

        -- codebook_indices.append(indices_i)
        codebook_indices[#codebook_indices + 1] = indices_i
        -- latents.append(z_e_i)
        latents[#latents + 1] = z_e_i
    end

    -- codes = torch.stack(codebook_indices, dim=1)
    local codes = tide.stack(codebook_indices, { dim = 2 })
    -- latents = torch.cat(latents, dim=1)
    latents = tide.cat(latents, { dim = 2 })

    return z_q, codes, latents, commitment_loss, codebook_loss
end

-- def from_codes(self, codes: torch.Tensor):
function ResidualVectorQuantize:from_codes(codes)
    local z_q = 0.0
    local z_p = {}
    -- n_codebooks = codes.shape[1]
    local n_codebooks = codes.shape[2]
    -- for i in range(n_codebooks):
    for i = 1, n_codebooks do
        -- z_p_i = self.quantizers[i].decode_code(codes[:, i, :])
        local z_p_i = self.quantizers[i]:decode_code(codes[{ {}, i, {} }])
        -- z_p.append(z_p_i)
        z_p[#z_p + 1] = z_p_i

        local z_q_i = self.quantizers[i].out_proj(z_p_i)
        z_q = z_q + z_q_i
    end
    -- return z_q, torch.cat(z_p, dim=1), codes
    return z_q, tide.cat(z_p, { dim = 2 }), codes
end

-- def from_latents(self, latents: torch.Tensor):
function ResidualVectorQuantize:from_latents(latents)
    local z_q = 0
    local z_p = {}
    local codes = {}
    -- dims = np.cumsum([0] + [q.codebook_dim for q in self.quantizers])
    local dims = { 0 }
    for i, q in ipairs(self.quantizers) do dims[i + 1] = dims[i] + q.codebook_dim end

    -- n_codebooks = np.where(dims <= latents.shape[1])[0].max(axis=0, keepdims=True)[0]
    -- (the largest 0-based position whose cumulative dim fits)
    local n_codebooks = 0
    for i, d in ipairs(dims) do
        if d <= latents.shape[2] then n_codebooks = i - 1 end
    end
    -- for i in range(n_codebooks):
    for i = 1, n_codebooks do
        -- j, k = dims[i], dims[i + 1]
        local j, k = dims[i], dims[i + 1]
        -- z_p_i, codes_i = self.quantizers[i].decode_latents(latents[:, j:k, :])
        local z_p_i, codes_i = self.quantizers[i]:decode_latents(latents[{ {}, { j + 1, k }, {} }])
        z_p[#z_p + 1] = z_p_i
        codes[#codes + 1] = codes_i

        local z_q_i = self.quantizers[i].out_proj(z_p_i)
        z_q = z_q + z_q_i
    end

    -- return z_q, torch.cat(z_p, dim=1), torch.stack(codes, dim=1)
    return z_q, tide.cat(z_p, { dim = 2 }), tide.stack(codes, { dim = 2 })
end

---------------------------------------------------------------------------------------------
-- dac/model/dac.py
---------------------------------------------------------------------------------------------
-- class ResidualUnit(nn.Module):
local ResidualUnit = nn.Module:extend("ResidualUnit")
-- def __init__(self, dim: int = 16, dilation: int = 1):
function ResidualUnit:init(dim, dilation)
    dim, dilation = dim or 16, dilation or 1
    -- pad = ((7 - 1) * dilation) // 2
    -- pad = ((7 - 1) * dilation) // 2 (math.floor: Lua 5.1 has no //)
    local pad = math.floor((7 - 1) * dilation / 2)
    self.block = nn.Sequential(
        Snake1d(dim),
        -- WNConv1d(dim, dim, kernel_size=7, dilation=dilation, padding=pad),
        WNConv1d(dim, dim, 7, { dilation = dilation, padding = pad }),
        Snake1d(dim),
        -- WNConv1d(dim, dim, kernel_size=1),
        WNConv1d(dim, dim, 1)
    )
end

function ResidualUnit:forward(x)
    local y = self.block(x)
    -- pad = (x.shape[-1] - y.shape[-1]) // 2
    local pad = math.floor((x.shape[-1] - y.shape[-1]) / 2)
    if pad > 0 then
        -- x = x[..., pad:-pad]
        x = x[{ "...", { pad + 1, -pad - 1 } }]
    end
    return x + y
end

-- class EncoderBlock(nn.Module):
local EncoderBlock = nn.Module:extend("EncoderBlock")
-- def __init__(self, dim: int = 16, stride: int = 1):
function EncoderBlock:init(dim, stride)
    dim, stride = dim or 16, stride or 1
    local half = math.floor(dim / 2) -- dim // 2
    self.block = nn.Sequential(
        -- ResidualUnit(dim // 2, dilation=1),
        ResidualUnit(half, 1),
        -- ResidualUnit(dim // 2, dilation=3),
        ResidualUnit(half, 3),
        -- ResidualUnit(dim // 2, dilation=9),
        ResidualUnit(half, 9),
        -- Snake1d(dim // 2),
        Snake1d(half),
        -- WNConv1d(dim // 2, dim, kernel_size=2 * stride, stride=stride,
        --          padding=math.ceil(stride / 2)),
        WNConv1d(half, dim, 2 * stride, { stride = stride, padding = math.ceil(stride / 2) })
    )
end

function EncoderBlock:forward(x)
    return self.block(x)
end

-- class DecoderBlock(nn.Module):
local DecoderBlock = nn.Module:extend("DecoderBlock")
-- def __init__(self, input_dim: int = 16, output_dim: int = 8, stride: int = 1):
function DecoderBlock:init(input_dim, output_dim, stride)
    input_dim, output_dim, stride = input_dim or 16, output_dim or 8, stride or 1
    self.block = nn.Sequential(
        Snake1d(input_dim),
        -- WNConvTranspose1d(input_dim, output_dim, kernel_size=2 * stride, stride=stride,
        --                   padding=math.ceil(stride / 2)),
        WNConvTranspose1d(input_dim, output_dim, 2 * stride,
            { stride = stride, padding = math.ceil(stride / 2) }),
        -- ResidualUnit(output_dim, dilation=1),
        ResidualUnit(output_dim, 1),
        -- ResidualUnit(output_dim, dilation=3),
        ResidualUnit(output_dim, 3),
        -- ResidualUnit(output_dim, dilation=9),
        ResidualUnit(output_dim, 9)
    )
end

function DecoderBlock:forward(x)
    return self.block(x)
end

---------------------------------------------------------------------------------------------
-- the checks
---------------------------------------------------------------------------------------------
-- the reference script's weights: the parameters in sorted name order (tide's 1-based
-- container names sort as PyTorch's 0-based ones at these sizes), the i-th (0-based)
-- names = sorted(n for n, _ in m.named_parameters())
-- p.copy_((torch.sin(torch.arange(p.numel()) * 2.37 + i) * scale
--          + (0.5 if 'alpha' in n else 0)).reshape(p.shape))
local function det_init(m, scale)
    local params, names = {}, {}
    for _, np_ in ipairs(m:named_parameters()) do
        params[np_[1]] = np_[2]
        names[#names + 1] = np_[1]
    end
    table.sort(names)
    tide.no_grad(function()
        for i, n in ipairs(names) do
            local p = params[n]
            local shift = n:find("alpha", 1, true) and 0.5 or 0
            p:copy_((tide.sin(tide.arange(0, p:numel()) * 2.37 + (i - 1)) * scale + shift)
                :reshape(p.shape))
        end
    end)
    return names
end

-- z = (torch.sin(torch.arange(2*8*6) * 1.93) * 4.0).reshape(2, 8, 6)
local function latent_input()
    return (tide.sin(tide.arange(0, 2 * 8 * 6) * 1.93) * 4.0):reshape(2, 8, 6)
end

local function plus_one(t)
    local out = {}
    for i, v in ipairs(t) do
        out[i] = type(v) == "table" and plus_one(v) or v + 1
    end
    return out
end

describe("ported descript-audio-codec (dac/nn/layers.py, quantize.py)", function()
    it("snake and Snake1d match PyTorch 1.13 for 3-d and 4-d input", function()
        -- x = (torch.sin(torch.arange(2*3*5) * 0.7) * 2).reshape(2, 3, 5)
        local x = (tide.sin(tide.arange(0, 30) * 0.7) * 2):reshape(2, 3, 5)
        -- alpha = (torch.cos(torch.arange(3) * 1.3) * 0.8 + 1.0).reshape(1, 3, 1)
        local alpha = (tide.cos(tide.arange(0, 3) * 1.3) * 0.8 + 1.0):reshape(1, 3, 1)
        local y = snake(x, alpha)
        assert.are.same({ 2, 3, 5 }, y:size())
        assert_close_list({ -0.2352492, -1.1410927, -1.5770812, -0.4400036, 0.0349992 },
            y[{ 1, 2 }]:totable(), 1e-5, "snake[0,1]")
        assert.is_true(close(y:sum():item(), 15.57691, 1e-5))
        local x4 = (tide.sin(tide.arange(0, 24) * 0.7) * 2):reshape(2, 3, 2, 2)
        local y4 = snake(x4, alpha)
        assert.are.same({ 2, 3, 2, 2 }, y4:size())
        assert.is_true(close(y4:sum():item(), 14.4546452, 1e-5))
        assert_close_list({ 3.063951, 2.5095587, 0.720426, -0.5840165 },
            y4[{ 2, 3 }]:reshape(-1):totable(), 1e-5, "snake4[1,2]")
        -- Snake1d with alpha = 1 is x + sin(x)^2 / (1 + 1e-9)
        local s = Snake1d(3)
        assert.are.same({ 1, 3, 1 }, s.alpha:size())
        local ys = s(x)
        assert.is_true((ys - (x + tide.sin(x):pow(2))):abs():max():item() < 1e-6)
    end)

    it("VectorQuantize: z_q, losses, codes, latents and gradients match PyTorch 1.13", function()
        local vq = VectorQuantize(8, 16, 4)
        assert.are.same({ "codebook.weight", "in_proj.bias", "in_proj.weight_g",
            "in_proj.weight_v", "out_proj.bias", "out_proj.weight_g", "out_proj.weight_v" },
            det_init(vq, 0.3))
        assert.are.same({ 4, 1, 1 }, vq.in_proj.weight_g:size())
        local z = latent_input():requires_grad_()
        local z_q, cl, cb, idx, z_e = vq(z)
        assert.are.same({ 2, 8, 6 }, z_q:size())
        assert.is_true(close(z_q:sum():item(), 0.5975499, 1e-4))
        assert_close_list({ -0.3188601, -0.0626267, 0.1574346, -0.2504307, 0.3425361, 0.0618143,
            -0.1341051, 0.2488549 }, z_q[{ 1, {}, 1 }]:totable(), 1e-5, "z_q[0,:,0]")
        assert_close_list({ 0.2570547, 0.2461859, 0.2570547, 0.2570547, 0.2510554, 0.2537998 },
            z_q[{ 2, 8 }]:totable(), 1e-5, "z_q[1,7]")
        assert_close_list({ 0.0134655, 0.0111464 }, cl:totable(), 1e-5, "commitment_loss")
        assert_close_list({ 0.0134655, 0.0111464 }, cb:totable(), 1e-5, "codebook_loss")
        -- PyTorch's codes [[8, 14, 14, 14, 8, 14], [14, 4, 14, 14, 10, 12]], 1-based here
        assert.are.same(plus_one({ { 8, 14, 14, 14, 8, 14 }, { 14, 4, 14, 14, 10, 12 } }),
            idx:totable())
        assert.are.equal("int64", idx.dtype)
        assert.is_true(close(z_e:sum():item(), 3.7026992, 1e-5))
        assert_close_list({ 0.2317404, -0.0687656, -0.1442052, 0.3051192 },
            z_e[{ 2, {}, 3 }]:totable(), 1e-5, "z_e[1,:,2]")

        -- (z_q.pow(2).sum() + 3 * cl.sum() + cb.sum()).backward()
        ;(z_q:pow(2):sum() + 3 * cl:sum() + cb:sum()):backward()
        assert.is_true(close(z.grad:sum():item(), -0.0158885, 1e-4))
        assert_close_list({ -0.0013004, 0.0206974, -0.0283714, 0.019976, -0.0002661, -0.0195944,
            0.0283567, -0.0210579 }, z.grad[{ 1, {}, 2 }]:totable(), 1e-4, "z.grad[0,:,1]")
        assert_close_list({ 0.1358108, -0.3525394, 0.371958, -0.0207024 },
            vq.in_proj.weight_g.grad:reshape(-1):totable(), 1e-4, "in_proj.weight_g.grad")
        assert_close_list({ -0.5504068, 0.29974, 0.7316716, 0.715436, -0.0906814, -0.8104966,
            -0.6623745, -0.1279329 }, vq.in_proj.weight_v.grad[{ 2, {}, 1 }]:totable(), 1e-4,
            "in_proj.weight_v.grad[1]")
        assert.is_true(close(vq.in_proj.weight_v.grad:abs():sum():item(), 7.6242046, 1e-4))
        assert.is_true(close(vq.codebook.weight.grad:abs():sum():item(), 0.2762676, 1e-4))
    end)

    it("ResidualVectorQuantize: outputs, from_codes and from_latents match PyTorch 1.13",
        function()
        -- rvq = ResidualVectorQuantize(8, 3, 16, 4, 0.0)
        local rvq = ResidualVectorQuantize(8, 3, 16, 4, 0.0)
        assert.are.equal(21, #det_init(rvq, 0.3))
        local z = latent_input()
        rvq:train()
        local z_q, codes, lat, cl, cb = rvq(z)
        assert.is_true(close(z_q:sum():item(), 0.8258637, 1e-4))
        assert_close_list({ -0.8911399, 0.2616587, -0.285617, -0.5956495, 0.8920469, -0.2763803,
            0.3425756, 0.5755657 }, z_q[{ 1, {}, 1 }]:totable(), 1e-5, "z_q[0,:,0]")
        assert_close_list({ -0.8709074, 0.2794134, -0.2797395, -0.6034941, 0.8764231, -0.29032,
            0.3375009, 0.5805107 }, z_q[{ 2, {}, 6 }]:totable(), 1e-5, "z_q[1,:,5]")
        local want_codes = plus_one({
            { { 8, 14, 14, 14, 8, 14 }, { 0, 6, 14, 0, 0, 14 }, { 0, 2, 14, 0, 0, 14 } },
            { { 14, 4, 14, 14, 10, 12 }, { 14, 0, 14, 14, 0, 0 }, { 6, 0, 12, 14, 0, 0 } } })
        assert.are.same(want_codes, codes:totable())
        assert.are.same({ 2, 12, 6 }, lat:size())
        assert.is_true(close(lat:sum():item(), 10.9644699, 1e-4))
        assert_close_list({ 0.2080065, 0.0174033, -0.2130044, 0.2373659, 0.1076647, 0.2135269,
            -0.424416, 0.3785229, 0.403001, 0.0311484, -0.4302848, 0.5708189 },
            lat[{ 1, {}, 4 }]:totable(), 1e-5, "latents[0,:,3]")
        assert.is_true(close(cl:item(), 0.0962578, 1e-4))
        assert.is_true(close(cb:item(), 0.0962578, 1e-4))

        -- the round trips: from_codes and from_latents give the forward's z_q back
        local zq2, zp2, c2 = rvq:from_codes(codes)
        assert.is_true((zq2 - z_q):abs():max():item() < 1e-5)
        assert.is_true(close(zp2:sum():item(), 10.0488348, 1e-4))
        assert.are.equal(codes, c2)
        local zq3, zp3, c3 = rvq:from_latents(lat)
        assert.is_true((zq3 - z_q):abs():max():item() < 1e-5)
        assert.is_true(close(zp3:sum():item(), 10.0488348, 1e-4))
        assert.are.same(want_codes, c3:totable())

        -- eval with n_quantizers = 2: two codebooks, their losses
        rvq:eval()
        z_q, codes, lat, cl, cb = rvq(z, 2)
        assert.is_true(close(z_q:sum():item(), 0.8952228, 1e-4))
        assert.are.same({ 2, 2, 6 }, codes:size())
        assert.are.same({ 2, 8, 6 }, lat:size())
        assert.is_true(close(cl:item(), 0.0485636, 1e-4))
        assert.is_true(close(cb:item(), 0.0485636, 1e-4))

        -- quantizer_dropout = 1 in training: every item gets 1..3 codebooks, never more
        local rvq_d = ResidualVectorQuantize(8, 3, 16, 4, 1.0)
        det_init(rvq_d, 0.3)
        tide.manual_seed(0)
        local zd = rvq_d(z)
        assert.are.same({ 2, 8, 6 }, zd:size())
        -- each item's z_q is the eval-mode z_q of its first k codebooks, for some k in 1..3
        rvq_d:eval()
        local ks = {}
        for bi = 1, 2 do
            for k = 1, 3 do
                local zk = rvq_d(z[{ { bi } }], k)
                if (zk - zd[{ { bi } }]):abs():max():item() < 1e-6 then ks[bi] = k end
            end
        end
        -- seed 0 draws 2 codebooks for item 1 (so the mask took effect) and 3 for item 2
        assert.are.same({ 2, 3 }, ks)
    end)
end)

describe("ported descript-audio-codec (dac/model/dac.py blocks)", function()
    it("a tiny WNConv1d + EncoderBlock, RVQ and DecoderBlock: 2 Adam steps match PyTorch's " ..
        "losses, falling", function()
        -- class Tiny(nn.Module):
        local Tiny = nn.Module:extend("Tiny")
        function Tiny:init()
            -- s.encoder = nn.Sequential(WNConv1d(1, 4, kernel_size=7, padding=3),
            --                           EncoderBlock(8, stride=2))
            self.encoder = nn.Sequential(WNConv1d(1, 4, 7, { padding = 3 }), EncoderBlock(8, 2))
            self.quantizer = ResidualVectorQuantize(8, 3, 16, 4, 0.0)
            -- s.decoder = nn.Sequential(DecoderBlock(8, 4, 2), Snake1d(4),
            --     WNConv1d(4, 1, kernel_size=7, padding=3), nn.Tanh())
            self.decoder = nn.Sequential(DecoderBlock(8, 4, 2), Snake1d(4),
                WNConv1d(4, 1, 7, { padding = 3 }), nn.Tanh())
        end
        function Tiny:forward(x)
            local z = self.encoder(x)
            local z_q, _, _, cl, cb = self.quantizer(z)
            return self.decoder(z_q), cl, cb, z
        end
        local m = Tiny()
        assert.are.equal(84, #det_init(m, 0.2))
        -- audio = (torch.sin(torch.arange(64) * 0.3) * 0.5).reshape(1, 1, 64)
        local audio = (tide.sin(tide.arange(0, 64) * 0.3) * 0.5):reshape(1, 1, 64)
        -- opt = torch.optim.Adam(m.parameters(), lr=1e-2)
        local opt = optim.Adam(m:parameters(), { lr = 1e-2 })
        local losses = {}
        for step = 1, 2 do
            opt:zero_grad()
            local y, cl, cb, z = m(audio)
            if step == 1 then
                assert.are.same({ 1, 1, 64 }, y:size())
                assert.are.same({ 1, 8, 32 }, z:size())
            end
            -- loss = F.l1_loss(y, audio) + 0.25 * cl + cb
            local loss = F.l1_loss(y, audio) + 0.25 * cl + cb
            loss:backward()
            opt:step()
            losses[#losses + 1] = loss:item()
        end
        tide.no_grad(function()
            local y, cl, cb = m(audio)
            losses[#losses + 1] = (F.l1_loss(y, audio) + 0.25 * cl + cb):item()
        end)
        for _, l in ipairs(losses) do assert_finite(l, "loss") end
        assert_close_list({ 0.33661705255508423, 0.32767027616500854, 0.3214944303035736 },
            losses, 1e-4, "losses")
        assert.is_true(losses[3] < losses[2] and losses[2] < losses[1])
    end)
end)
