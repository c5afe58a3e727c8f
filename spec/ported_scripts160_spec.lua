-- ported_scripts160_spec.lua — lucidrains/vector-quantize-pytorch (HEAD):
-- vector_quantize_pytorch/finite_scalar_quantization.py (FSQ: the _levels / _basis buffers,
-- bound with half_l / offset / shift, round_ste, quantize, _scale_and_shift and its inverse,
-- codes_to_indices, indices_to_codes, implicit_codebook, forward with project_in / project_out,
-- the channel-first and num_codebooks rearranges; preserve_symmetry, noise_dropout and
-- bound_hard_clamp ported too) and vector_quantize_pytorch/lookup_free_quantization.py (LFQ: the
-- codebook of bits, forward with sign quantization and the straight-through estimator, the
-- per-sample and batch entropy aux losses, the commitment loss, indices from the mask),
-- ported line for line at tiny sizes with fixed inputs and weights (formulas) checked against
-- PyTorch 1.13 running the same two files. The Python line stands above each Lua line that
-- differs from it.
-- Left out (defaults kept): FSQ's orthogonal_rotation and allowed_dtypes other than the
-- float32 / float64 pair; LFQ's spherical (BSQ), soft_clamp_input_value,
-- cosine_sim_project_in (CosineSimLinear), orthogonal_rotation, experimental_softplus_entropy_loss
-- and the distributed mean of avg_prob (one process: maybe_distributed_mean is the identity).
-- Codebook indices are values the code computes (0-based, as in Python), not tide indices.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local einops = tide.einops
local rearrange, reduce = einops.rearrange, einops.reduce

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

-- def exists(v):
local function exists(v)
    return v ~= nil
end

-- def default(*args):
local function default(...)
    for i = 1, select("#", ...) do
        local arg = select(i, ...)
        if exists(arg) then
            -- return arg() if callable(arg) else arg   (lookup_free_quantization.py's)
            return type(arg) == "function" and arg() or arg
        end
    end
    return nil
end

local function identity(t)
    return t
end

-- def pack_one(t, pattern): return pack([t], pattern)
local function pack_one(t, pattern)
    return einops.pack({ t }, pattern)
end

-- def unpack_one(t, ps, pattern): return unpack(t, ps, pattern)[0]
local function unpack_one(t, ps, pattern)
    return einops.unpack(t, ps, pattern)[1]
end

---------------------------------------------------------------------------------------------
-- 1. finite_scalar_quantization.py
---------------------------------------------------------------------------------------------
-- def round_ste(z):
local function round_ste(z)
    -- zhat = z.round()
    local zhat = z:round()
    -- return z + (zhat - z).detach()
    return z + (zhat - z):detach()
end

-- def floor_ste(z):
local function floor_ste(z)
    local zhat = z:floor()
    return z + (zhat - z):detach()
end

-- class FSQ(Module):
local FSQ = nn.Module:extend("FSQ")

-- def __init__(self, levels, dim = None, num_codebooks = 1, keep_num_codebooks_dim = None,
--     scale = None, allowed_dtypes = (torch.float32, torch.float64), channel_first = False,
--     projection_has_bias = True, return_indices = True, force_quantization_f32 = True,
--     preserve_symmetry = False, noise_dropout = 0., bound_hard_clamp = False, ...):
function FSQ:init(levels, opts)
    opts = opts or {}
    local dim, num_codebooks = opts.dim, opts.num_codebooks or 1
    local preserve_symmetry = opts.preserve_symmetry or false
    local noise_dropout = opts.noise_dropout or 0
    local projection_has_bias = opts.projection_has_bias ~= false
    local return_indices = opts.return_indices ~= false
    -- assert not (any([l == 2 for l in levels]) and not preserve_symmetry), ...
    local any2 = false
    for _, l in ipairs(levels) do any2 = any2 or l == 2 end
    assert(not (any2 and not preserve_symmetry),
        "turn on `preserve_symmetry` for using any levels == 2, or use a greater level")

    -- _levels = tensor(levels, dtype = int32)
    local _levels = tide.tensor(levels, { dtype = "int32" })
    self:register_buffer("_levels", _levels, false)

    -- _basis = torch.cumprod(tensor([1] + levels[:-1]), dim = 0, dtype = int32)
    local head = { 1 }
    for i = 1, #levels - 1 do head[#head + 1] = levels[i] end
    local _basis = tide.cumprod(tide.tensor(head), 1, { dtype = "int32" })
    self:register_buffer("_basis", _basis, false)

    self.scale = opts.scale

    assert(not (noise_dropout > 0 and not preserve_symmetry))
    self.preserve_symmetry = preserve_symmetry
    self.noise_dropout = noise_dropout

    local codebook_dim = #levels
    self.codebook_dim = codebook_dim

    local effective_codebook_dim = codebook_dim * num_codebooks
    self.num_codebooks = num_codebooks
    self.effective_codebook_dim = effective_codebook_dim

    -- keep_num_codebooks_dim = default(keep_num_codebooks_dim, num_codebooks > 1)
    local keep_num_codebooks_dim = default(opts.keep_num_codebooks_dim, num_codebooks > 1)
    assert(not (num_codebooks > 1 and not keep_num_codebooks_dim))
    self.keep_num_codebooks_dim = keep_num_codebooks_dim

    -- self.dim = default(dim, len(_levels) * num_codebooks)
    self.dim = default(dim, #_levels * num_codebooks)

    self.channel_first = opts.channel_first or false

    local has_projections = self.dim ~= effective_codebook_dim
    -- self.project_in = nn.Linear(self.dim, effective_codebook_dim, bias = ...) if ... else
    self.project_in = has_projections
        and nn.Linear(self.dim, effective_codebook_dim, { bias = projection_has_bias })
        or nn.Identity()
    self.project_out = has_projections
        and nn.Linear(effective_codebook_dim, self.dim, { bias = projection_has_bias })
        or nn.Identity()

    self.has_projections = has_projections

    self.return_indices = return_indices

    if return_indices then
        -- self.codebook_size = self._levels.prod().item()
        self.codebook_size = self._levels:prod():item()
        -- implicit_codebook = self._indices_to_codes(torch.arange(self.codebook_size))
        local implicit_codebook = self:_indices_to_codes(tide.arange(0, self.codebook_size))
        self:register_buffer("implicit_codebook", implicit_codebook, false)
    end

    self.force_quantization_f32 = opts.force_quantization_f32 ~= false

    self.bound_hard_clamp = opts.bound_hard_clamp or false
    -- GAP: orthogonal_rotation (nn.init.orthogonal_ buffer) is left out (default False)
end

-- def bound(self, z, eps = 1e-3, hard_clamp = False):
function FSQ:bound(z, eps, hard_clamp)
    eps = eps or 1e-3
    -- maybe_tanh = tanh if not hard_clamp else partial(clamp, min = -1., max = 1.)
    local maybe_tanh = not hard_clamp and tide.tanh
        or function(t) return t:clamp({ min = -1, max = 1 }) end
    local maybe_atanh = not hard_clamp and tide.atanh or identity

    -- half_l = (self._levels - 1) * (1 + eps) / 2
    local half_l = (self._levels - 1) * (1 + eps) / 2
    -- offset = torch.where(self._levels % 2 == 0, 0.5, 0.0)
    local offset = tide.where((self._levels % 2):eq(0), 0.5, 0.0)
    local shift = maybe_atanh(offset / half_l)
    local bounded_z = maybe_tanh(z + shift) * half_l - offset
    -- half_width = self._levels // 2   (Lua 5.1 / LuaJIT have no `//`: floor_divide)
    local half_width = self._levels:floor_divide(2)
    return round_ste(bounded_z) / half_width
end

-- def symmetry_preserving_bound(self, z, hard_clamp = False):
function FSQ:symmetry_preserving_bound(z, hard_clamp)
    local maybe_tanh = not hard_clamp and tide.tanh
        or function(t) return t:clamp({ min = -1, max = 1 }) end
    local levels_minus_1 = self._levels - 1
    -- scale = 2. / levels_minus_1
    local scale = 2 / levels_minus_1
    -- bracket = (levels_minus_1 * (maybe_tanh(z) + 1) / 2.) + 0.5
    local bracket = (levels_minus_1 * (maybe_tanh(z) + 1) / 2) + 0.5
    bracket = floor_ste(bracket)
    return scale * bracket - 1
end

-- def quantize(self, z):
function FSQ:quantize(z)
    -- bound_fn = self.symmetry_preserving_bound if preserve_symmetry else self.bound
    if self.preserve_symmetry then
        return self:symmetry_preserving_bound(z, self.bound_hard_clamp)
    end
    return self:bound(z, nil, self.bound_hard_clamp)
end

-- def maybe_apply_noise(self, bounded_z):
function FSQ:maybe_apply_noise(bounded_z)
    local noise_dropout = self.noise_dropout
    if not self.training or noise_dropout == 0 then
        return bounded_z
    end
    -- offset_mask = torch.full_like(bounded_z, noise_dropout).bernoulli_().bool()
    local offset_mask = tide.full_like(bounded_z, noise_dropout):bernoulli_():bool()
    local offset = tide.rand_like(bounded_z) - 0.5
    bounded_z = tide.where(offset_mask, bounded_z + offset, bounded_z)
    -- return bounded_z.clamp(-1., 1.)
    return bounded_z:clamp(-1, 1)
end

-- def _scale_and_shift(self, zhat_normalized):
function FSQ:_scale_and_shift(zhat_normalized)
    if self.preserve_symmetry then
        return (zhat_normalized + 1) / (2 / (self._levels - 1))
    end
    local half_width = self._levels:floor_divide(2)
    return (zhat_normalized * half_width) + half_width
end

-- def _scale_and_shift_inverse(self, zhat):
function FSQ:_scale_and_shift_inverse(zhat)
    if self.preserve_symmetry then
        return zhat * (2 / (self._levels - 1)) - 1
    end
    local half_width = self._levels:floor_divide(2)
    return (zhat - half_width) / half_width
end

function FSQ:_indices_to_codes(indices)
    local level_indices = self:indices_to_level_indices(indices)
    local codes = self:_scale_and_shift_inverse(level_indices)
    return codes
end

-- def indices_to_level_indices(self, indices):
function FSQ:indices_to_level_indices(indices)
    indices = rearrange(indices, "... -> ... 1")
    -- codes_non_centered = (indices // self._basis) % self._levels
    local codes_non_centered = indices:floor_divide(self._basis) % self._levels
    return codes_non_centered
end

-- def codes_to_indices(self, zhat):
function FSQ:codes_to_indices(zhat)
    -- assert zhat.shape[-1] == self.codebook_dim
    assert(zhat:size(-1) == self.codebook_dim)
    zhat = self:_scale_and_shift(zhat)
    -- return (zhat * self._basis).sum(dim = -1).round().to(int32)
    return (zhat * self._basis):sum({ dim = -1 }):round():to("int32")
end

-- def indices_to_codes(self, indices):
function FSQ:indices_to_codes(indices)
    assert(exists(indices))
    -- is_img_or_video = indices.ndim >= (3 + int(self.keep_num_codebooks_dim))
    local is_img_or_video = indices.ndim >= 3 + (self.keep_num_codebooks_dim and 1 or 0)
    local codes = self:_indices_to_codes(indices)
    if self.keep_num_codebooks_dim then
        codes = rearrange(codes, "... c d -> ... (c d)")
    end
    codes = self.project_out(codes)
    if is_img_or_video or self.channel_first then
        codes = rearrange(codes, "b ... d -> b d ...")
    end
    return codes
end

-- def forward(self, z):
function FSQ:forward(z)
    local is_img_or_video = z.ndim >= 4
    local need_move_channel_last = is_img_or_video or self.channel_first

    local ps
    if need_move_channel_last then
        z = rearrange(z, "b d ... -> b ... d")
        -- z, ps = pack_one(z, 'b * d')
        z, ps = pack_one(z, "b * d")
    end

    -- assert z.shape[-1] == self.dim, f'expected dimension of {self.dim} but found ...'
    assert(z:size(-1) == self.dim, ("expected dimension of %d but found dimension of %d")
        :format(self.dim, z:size(-1)))

    z = self.project_in(z)

    -- z = rearrange(z, 'b n (c d) -> b n c d', c = self.num_codebooks)
    z = rearrange(z, "b n (c d) -> b n c d", { c = self.num_codebooks })

    local force_f32 = self.force_quantization_f32
    local codes, indices
    -- with quantization_context():   (autocast('cuda', enabled = False) if force_f32)
    tide.amp.autocast("cuda", { enabled = not force_f32 }, function()
        local orig_dtype = z.dtype
        -- if force_f32 and orig_dtype not in self.allowed_dtypes: z = z.float()
        if force_f32 and orig_dtype ~= "float32" and orig_dtype ~= "float64" then
            z = z:float()
        end

        codes = self:quantize(z)

        if self.return_indices then
            indices = self:codes_to_indices(codes)
        end

        codes = self:maybe_apply_noise(codes)

        codes = rearrange(codes, "b n c d -> b n (c d)")

        codes = codes:to(orig_dtype)
    end)

    local out = self.project_out(codes)

    if need_move_channel_last then
        out = unpack_one(out, ps, "b * d")
        out = rearrange(out, "b ... d -> b d ...")

        -- indices = maybe(unpack_one)(indices, ps, 'b * c')
        if exists(indices) then indices = unpack_one(indices, ps, "b * c") end
    end

    if not self.keep_num_codebooks_dim and self.return_indices then
        -- indices = maybe(rearrange)(indices, '... 1 -> ...')
        if exists(indices) then indices = rearrange(indices, "... 1 -> ...") end
    end

    return out, indices
end

---------------------------------------------------------------------------------------------
-- 2. lookup_free_quantization.py
---------------------------------------------------------------------------------------------
-- Return = namedtuple('Return', ['quantized', 'indices', 'entropy_aux_loss'])
local function Return(quantized, indices, entropy_aux_loss)
    return { quantized, indices, entropy_aux_loss, quantized = quantized, indices = indices,
        entropy_aux_loss = entropy_aux_loss }
end

-- LossBreakdown = namedtuple('LossBreakdown', ['per_sample_entropy', 'batch_entropy', ...])
local function LossBreakdown(per_sample_entropy, batch_entropy, commitment)
    return { per_sample_entropy, batch_entropy, commitment, per_sample_entropy =
        per_sample_entropy, batch_entropy = batch_entropy, commitment = commitment }
end

-- def log(t, eps = 1e-5):
local function log(t, eps)
    -- return t.clamp(min = eps).log()
    return t:clamp({ min = eps or 1e-5 }):log()
end

-- def entropy(prob):
local function entropy(prob)
    -- return (-prob * log(prob)).sum(dim=-1)
    return (-prob * log(prob)):sum({ dim = -1 })
end

-- from math import log2
local function log2_int(n)
    return math.floor(math.log(n) / math.log(2) + 0.5)
end

local function log2_is_integer(n)
    return 2 ^ log2_int(n) == n
end

-- class LFQ(Module):
local LFQ = nn.Module:extend("LFQ")

-- def __init__(self, *, dim = None, codebook_size = None, entropy_loss_weight = 0.1,
--     commitment_loss_weight = 0., diversity_gamma = 1., straight_through_activation =
--     nn.Identity(), num_codebooks = 1, keep_num_codebooks_dim = None, codebook_scale = 1.,
--     frac_per_sample_entropy = 1., has_projections = None, projection_has_bias = True,
--     channel_first = None, force_quantization_f32 = True, ...):
function LFQ:init(opts)
    local dim, codebook_size = opts.dim, opts.codebook_size
    local num_codebooks = opts.num_codebooks or 1
    local codebook_scale = opts.codebook_scale or 1
    local frac_per_sample_entropy = opts.frac_per_sample_entropy or 1

    assert(exists(dim) or exists(codebook_size),
        "either dim or codebook_size must be specified for LFQ")
    -- assert not exists(codebook_size) or log2(codebook_size).is_integer(), ...
    --   (Lua 5.1's math.log takes no base: log2 here rounds and checks 2 ^ k == n exactly)
    assert(not exists(codebook_size) or log2_is_integer(codebook_size),
        "your codebook size must be a power of 2 for lookup free quantization")

    -- codebook_size = default(codebook_size, lambda: 2 ** dim)
    codebook_size = default(codebook_size, function() return 2 ^ dim end)
    self.codebook_size = codebook_size

    -- codebook_dim = int(log2(codebook_size))
    local codebook_dim = log2_int(codebook_size)
    local codebook_dims = codebook_dim * num_codebooks
    dim = default(dim, codebook_dims)

    local has_projections = default(opts.has_projections, dim ~= codebook_dims)

    -- GAP: cosine_sim_project_in (CosineSimLinear) left out: project_in is nn.Linear
    local bias = opts.projection_has_bias ~= false
    self.project_in = has_projections and nn.Linear(dim, codebook_dims, { bias = bias })
        or nn.Identity()
    self.project_out = has_projections and nn.Linear(codebook_dims, dim, { bias = bias })
        or nn.Identity()
    self.has_projections = has_projections

    self.dim = dim
    self.codebook_dim = codebook_dim
    self.num_codebooks = num_codebooks

    local keep_num_codebooks_dim = default(opts.keep_num_codebooks_dim, num_codebooks > 1)
    assert(not (num_codebooks > 1 and not keep_num_codebooks_dim))
    self.keep_num_codebooks_dim = keep_num_codebooks_dim

    self.channel_first = opts.channel_first

    -- self.activation = straight_through_activation
    self.activation = opts.straight_through_activation or nn.Identity()

    -- GAP: spherical (BSQ) left out: maybe_l2norm is the identity
    self.maybe_l2norm = identity

    -- assert 0 < frac_per_sample_entropy <= 1.
    assert(0 < frac_per_sample_entropy and frac_per_sample_entropy <= 1)
    self.frac_per_sample_entropy = frac_per_sample_entropy

    self.diversity_gamma = opts.diversity_gamma or 1
    self.entropy_loss_weight = opts.entropy_loss_weight or 0.1

    self.codebook_scale = codebook_scale

    self.commitment_loss_weight = opts.commitment_loss_weight or 0

    -- self.register_buffer('mask', 2 ** torch.arange(codebook_dim - 1, -1, -1))
    self:register_buffer("mask", 2 ^ tide.arange(codebook_dim - 1, -1, -1))
    self:register_buffer("zero", tide.tensor(0.0), false)

    self.force_quantization_f32 = opts.force_quantization_f32 ~= false

    local all_codes = tide.arange(0, codebook_size)
    -- bits = ((all_codes[..., None].int() & self.mask) != 0).float()
    local bits = all_codes:unsqueeze(-1):int():bitwise_and(self.mask):ne(0):float()
    local codebook = self:bits_to_codes(bits)

    self:register_buffer("codebook", codebook:float(), false)
end

function LFQ:bits_to_codes(bits)
    return bits * self.codebook_scale * 2 - self.codebook_scale
end

-- def indices_to_codes(self, indices, project_out = True):
function LFQ:indices_to_codes(indices, project_out)
    if project_out == nil then project_out = true end
    local is_img_or_video = indices.ndim >= 3 + (self.keep_num_codebooks_dim and 1 or 0)
    local should_transpose = default(self.channel_first, is_img_or_video)

    if not self.keep_num_codebooks_dim then
        indices = rearrange(indices, "... -> ... 1")
    end

    -- bits = ((indices[..., None].int() & self.mask) != 0).to(self.dtype)
    local bits = indices:unsqueeze(-1):int():bitwise_and(self.mask):ne(0)
        :to(self.codebook.dtype)

    local codes = self:bits_to_codes(bits)

    codes = self.maybe_l2norm(codes)

    codes = rearrange(codes, "... c d -> ... (c d)")

    if project_out then
        codes = self.project_out(codes)
    end

    if should_transpose then
        codes = rearrange(codes, "b ... d -> b d ...")
    end

    return codes
end

-- def forward(self, x, inv_temperature = 100., return_loss_breakdown = False, mask = None):
function LFQ:forward(x, inv_temperature, return_loss_breakdown, mask)
    inv_temperature = inv_temperature or 100
    local is_img_or_video = x.ndim >= 4
    local should_transpose = default(self.channel_first, is_img_or_video)

    local ps
    if should_transpose then
        x = rearrange(x, "b d ... -> b ... d")
        x, ps = pack_one(x, "b * d")
    end

    assert(x:size(-1) == self.dim, ("expected dimension of %d but received %d")
        :format(self.dim, x:size(-1)))

    x = self.project_in(x)

    x = rearrange(x, "b n (c d) -> b n c d", { c = self.num_codebooks })

    x = self.maybe_l2norm(x)

    local force_f32 = self.force_quantization_f32
    local indices, entropy_aux_loss, per_sample_entropy, codebook_entropy, commit_loss

    tide.amp.autocast("cuda", { enabled = not force_f32 }, function()
        local orig_dtype
        if force_f32 then
            orig_dtype = x.dtype
            x = x:float()
        end

        -- quantize by eq 3.
        local original_input = x

        -- codebook_value = torch.ones_like(x) * self.codebook_scale
        local codebook_value = tide.ones_like(x) * self.codebook_scale
        -- quantized = torch.where(x > 0, codebook_value, -codebook_value)
        local quantized = tide.where(x:gt(0), codebook_value, -codebook_value)

        -- indices = reduce((quantized > 0).int() * self.mask.int(), 'b n c d -> b n c', 'sum')
        indices = reduce(quantized:gt(0):int() * self.mask:int(), "b n c d -> b n c", "sum")

        quantized = self.maybe_l2norm(quantized)

        if self.training then
            x = self.activation(x)
            -- x = x + (quantized - x).detach()
            x = x + (quantized - x):detach()
        else
            x = quantized
        end

        if self.training then
            local codebook = self.codebook

            if force_f32 then
                codebook = codebook:float()
            end

            codebook = self.maybe_l2norm(codebook)

            local input_for_entropy = original_input

            if exists(mask) then
                input_for_entropy = original_input[mask]
            end

            input_for_entropy = rearrange(input_for_entropy, "b n ... -> (b n) ...")

            local per_sample_probs
            if self.frac_per_sample_entropy < 1 then
                local num_tokens = input_for_entropy:size(1)
                -- num_sampled_tokens = int(num_tokens * self.frac_per_sample_entropy)
                local num_sampled_tokens = math.floor(num_tokens * self.frac_per_sample_entropy)
                -- rand_mask = torch.randn(num_tokens).argsort(dim = -1) < num_sampled_tokens
                --   (argsort's ranks are 0-based values here, as in Python)
                local rand_mask = tide.randn(num_tokens):argsort({ dim = -1 })
                    :lt(num_sampled_tokens)

                local sampled_input = input_for_entropy[rand_mask]

                -- sampled_distance = -2 * einsum('... i d, j d -> ... i j', sampled_input, ...)
                local sampled_distance = -2 * tide.einsum("...id,jd->...ij", sampled_input,
                    codebook)

                -- sampled_prob = (-sampled_distance * inv_temperature).softmax(dim = -1)
                local sampled_prob = (-sampled_distance * inv_temperature):softmax(-1)

                per_sample_probs = sampled_prob
            else
                -- distance = -2 * einsum('... i d, j d -> ... i j', input_for_entropy, codebook)
                local distance = -2 * tide.einsum("...id,jd->...ij", input_for_entropy, codebook)

                local prob = (-distance * inv_temperature):softmax(-1)

                per_sample_probs = prob
            end

            per_sample_entropy = entropy(per_sample_probs):mean()

            local avg_prob = reduce(per_sample_probs, "... c d -> c d", "mean")

            -- GAP: maybe_distributed_mean (dist all_reduce) left out: one process

            codebook_entropy = entropy(avg_prob):mean()

            entropy_aux_loss = per_sample_entropy - self.diversity_gamma * codebook_entropy
        else
            entropy_aux_loss, per_sample_entropy, codebook_entropy = self.zero, self.zero,
                self.zero
        end

        -- GAP: experimental_softplus_entropy_loss left out (default False)

        if self.training and self.commitment_loss_weight > 0 then
            -- commit_loss = F.mse_loss(original_input, quantized.detach(), reduction = 'none')
            commit_loss = F.mse_loss(original_input, quantized:detach(), { reduction = "none" })

            if exists(mask) then
                commit_loss = commit_loss[mask]
            end

            commit_loss = commit_loss:mean()
        else
            commit_loss = self.zero
        end

        if force_f32 then
            -- x = x.type(orig_dtype)
            x = x:to(orig_dtype)
        end
    end)

    x = rearrange(x, "b n c d -> b n (c d)")

    x = self.project_out(x)

    if should_transpose then
        x = unpack_one(x, ps, "b * d")
        x = rearrange(x, "b ... d -> b d ...")

        indices = unpack_one(indices, ps, "b * c")
    end

    if not self.keep_num_codebooks_dim then
        indices = rearrange(indices, "... 1 -> ...")
    end

    -- aux_loss = entropy_aux_loss * self.entropy_loss_weight + commit_loss * self.commitment_...
    local aux_loss = entropy_aux_loss * self.entropy_loss_weight
        + commit_loss * self.commitment_loss_weight

    local ret = Return(x, indices, aux_loss)

    if not return_loss_breakdown then
        return ret
    end

    return ret, LossBreakdown(per_sample_entropy, codebook_entropy, commit_loss)
end

---------------------------------------------------------------------------------------------
-- fixed inputs and weights (the same formulas as the PyTorch reference script)
---------------------------------------------------------------------------------------------
local function flat(n)
    return tide.arange(0, n, { dtype = "float32" })
end

local function fill_linear(lin, a, f, c, bscale)
    local o, i = lin.weight:size(1), lin.weight:size(2)
    tide.no_grad(function()
        lin.weight:copy_((a * f(c * flat(o * i) + 0.2)):reshape(o, i))
        lin.bias:copy_(bscale * tide.cos(flat(o)))
    end)
end

local function vals(t)
    return t:detach():reshape(-1):tolist()
end

local function assert_equal_list(want, got, what)
    assert.are.same(want, got, what)
end

local Z24 = function()
    return (2 * tide.sin(0.7 * flat(24) + 0.3)):reshape(2, 3, 4):requires_grad_()
end
local G24 = function()
    return tide.cos(0.5 * flat(24)):reshape(2, 3, 4)
end

describe("ported vector-quantize-pytorch: FSQ", function()
    it("levels {3,4,5} with projections: buffers, codes, indices, round trip, STE grad", function()
        local q = FSQ({ 3, 4, 5 }, { dim = 4 })
        fill_linear(q.project_in, 0.5, tide.sin, 1.3, 0.1)
        fill_linear(q.project_out, 0.4, tide.cos, 0.9, 0.05)
        assert_equal_list({ 1, 3, 12 }, q._basis:tolist(), "_basis")
        assert.are.equal("int32", q._basis.dtype)
        assert.are.equal(60, q.codebook_size)
        assert_close_list({ -1.0, -1.0, -1.0, 0.0, -1.0, -1.0, 1.0, -1.0, -1.0, -1.0, -0.5, -1.0,
            0.0, -0.5, -1.0, 1.0, -0.5, -1.0, -1.0, 0.0, -1.0, 0.0, 0.0, -1.0, 1.0, 0.0, -1.0,
            -1.0, 0.5, -1.0, 0.0, 0.5, -1.0, 1.0, 0.5, -1.0 },
            vals(q.implicit_codebook[{ { 1, 12 } }]), 1e-7, "implicit_codebook")
        -- codes_to_indices inverts the implicit codebook
        local cti = q:codes_to_indices(q.implicit_codebook)
        assert.are.equal("int32", cti.dtype)
        assert_equal_list(tide.arange(0, 60):tolist(), cti:tolist(), "codes_to_indices")

        local z = Z24()
        local out, idx = q(z)
        assert.are.same({ 2, 3, 4 }, out.shape)
        assert.are.equal("int32", idx.dtype)
        assert_equal_list({ 47, 1, 58, 2, 57, 5 }, vals(idx), "indices")
        local want_out = { 0.44951650500297546, -0.5220394730567932, 0.5724459886550903,
            -0.5731325149536133, 0.03502029553055763, 0.34835776686668396, -0.5868614912033081,
            0.6526652574539185, -0.02573951706290245, -0.13613398373126984, 0.3499292731285095,
            -0.5566957592964172, 0.4270469546318054, -0.04002545773983002, -0.2766353189945221,
            0.48011475801467896, -0.41776615381240845, 0.25224924087524414, 0.03970308601856232,
            -0.3841453194618225, 0.5177661776542664, -0.19821901619434357, -0.08131776750087738,
            0.2851460576057434 }
        assert_close_list(want_out, vals(out), 1e-5, "out")
        assert_close_list({ 1.0, 0.5, 0.5, 0.0, -1.0, -1.0, 0.0, 0.5, 1.0, 1.0, -1.0, -1.0, -1.0,
            0.5, 1.0, 1.0, -0.5, -1.0 }, vals(q:quantize(q.project_in(z))), 1e-6, "codes")
        -- indices -> codes -> project_out gives the forward output back
        assert_close_list(want_out, vals(q:indices_to_codes(idx)), 1e-5, "round trip")

        -- the gradient goes through round_ste as through tanh alone
        local loss = (out * G24()):sum()
        loss:backward()
        assert_close_list({ 0.04709234461188316, 0.08775167912244797, -0.00014540791744366288,
            -0.08782947063446045, -0.051610324531793594, -0.009236818179488182,
            0.046668652445077896, 0.03420445695519447, -0.008452429436147213,
            -0.10091311484575272, -0.0455358549952507, 0.07655153423547745, 0.010131345130503178,
            0.049984611570835114, 0.01661030575633049, -0.041098132729530334,
            -0.016535677015781403, 0.01625056564807892, 0.025229694321751595,
            -0.0027527285274118185, 0.049120720475912094, -0.04920261725783348,
            -0.07544399797916412, 0.00884021632373333 }, vals(z.grad), 1e-5, "z.grad")
    end)

    it("image input, two codebooks, no projections: channel-last pack and unpack", function()
        local qb = FSQ({ 3, 5 }, { num_codebooks = 2 })
        assert.is_false(qb.has_projections)
        local x = (1.5 * tide.cos(0.37 * flat(48) + 0.1)):reshape(2, 4, 2, 3):requires_grad_()
        local outb, idxb = qb(x)
        assert.are.same({ 2, 4, 2, 3 }, outb.shape)
        assert.are.same({ 2, 2, 3, 2 }, idxb.shape)
        assert_equal_list({ 2, 13, 2, 13, 2, 11, 1, 8, 1, 5, 3, 2, 9, 2, 9, 1, 12, 1, 12, 3, 12, 6,
            13, 9 }, vals(idxb), "indices")
        local want = { 1.0, 1.0, 1.0, 0.0, 0.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -0.5, 0.0, 0.0,
            1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 0.0, -0.5, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, 0.0,
            0.5, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -0.5,
            0.0, 0.5 }
        assert_close_list(want, vals(outb), 1e-6, "out")
        assert_close_list(want, vals(qb:indices_to_codes(idxb)), 1e-6, "round trip")
        outb:pow(2):sum():backward()
        assert_close_list({ 0.36671218276023865, 0.4830791652202606, 0.8392600417137146, 0.0, 0.0,
            -1.4925302267074585, -0.8134387135505676, -0.4728395342826843, -0.3650560975074768,
            -0.4044201970100403, -0.624565839767456, -0.5788467526435852, 0.0, 0.0,
            1.1096872091293335, 0.6013187766075134, 0.397036075592041, 0.367412269115448,
            0.48701444268226624, 0.8490631580352783, 0.772609293460846, 0.0, -0.7391091585159302,
            -0.8041206002235413, -0.4691903591156006, -0.3645292818546295, -0.40655016899108887,
            -0.6311012506484985, -1.1709096431732178, 0.0, 0.9136321544647217, 0.5484857559204102,
            0.5952862501144409, 0.395173043012619, 0.36815962195396423, 0.49102985858917236,
            0.8589977025985718, 0.0, 0.0, -1.463890552520752, -0.7949336171150208,
            -0.46561652421951294, -0.3640489876270294, -0.40873807668685913, -0.637747585773468,
            -0.5921099781990051, 0.0, 0.9081666469573975 }, vals(x.grad), 1e-5, "x.grad")
    end)

    it("a level of 2 needs preserve_symmetry; with it: codes, indices, floor_ste grad", function()
        local ok, err = pcall(FSQ, { 2, 3 })
        assert.is_false(ok)
        assert.is_truthy(tostring(err):find("turn on `preserve_symmetry` for using any levels == 2",
            1, true))
        -- preserve_symmetry takes it: levels {2, 3} give 2 * 3 codes in [-1, 1]
        local qs = FSQ({ 2, 3 }, { preserve_symmetry = true })
        assert_close_list({ -1, -1, 1, -1, -1, 0, 1, 0, -1, 1, 1, 1 }, vals(qs.implicit_codebook),
            1e-6, "symmetric implicit_codebook")
        local z = (1.2 * tide.sin(0.9 * flat(12) + 0.4)):reshape(2, 3, 2):requires_grad_()
        local out, idx = qs(z)
        assert_close_list({ 1, 1, 1, 0, -1, -1, -1, 0, 1, 1, 1, -1 }, vals(out), 1e-6, "sym out")
        assert_equal_list({ 5, 3, 0, 2, 5, 1 }, vals(idx), "sym indices")
        -- floor_ste: the gradient is (L - 1) / 2 * tanh' times 2 / (L - 1), tanh' alone
        out:sum():backward()
        assert_close_list({ 0.8098893165588379, 0.32789430022239685, 0.439313143491745,
            0.9975144267082214, 0.48124077916145325, 0.3158756494522095, 0.7438250780105591,
            0.796696126461029, 0.32508957386016846, 0.4472578465938568, 0.9991165995597839,
            0.4722338020801544 }, vals(z.grad), 1e-5, "sym z.grad")
    end)
end)

describe("ported vector-quantize-pytorch: LFQ", function()
    it("dim 4 -> 8 codes: codebook, output, indices, aux losses, STE grad, eval", function()
        local l = LFQ({ dim = 4, codebook_size = 8, entropy_loss_weight = 0.1,
            commitment_loss_weight = 0.25 })
        fill_linear(l.project_in, 0.5, tide.sin, 1.3, 0.1)
        fill_linear(l.project_out, 0.4, tide.cos, 0.9, 0.05)
        assert_equal_list({ 4, 2, 1 }, l.mask:tolist(), "mask")
        assert_close_list({ -1.0, -1.0, -1.0, -1.0, -1.0, 1.0, -1.0, 1.0, -1.0, -1.0, 1.0, 1.0,
            1.0, -1.0, -1.0, 1.0, -1.0, 1.0, 1.0, 1.0, -1.0, 1.0, 1.0, 1.0 }, vals(l.codebook), 0,
            "codebook")

        local x = Z24()
        local ret, br = l(x, 2, true)
        local want_out = { 0.45700639486312866, -0.6827107667922974, 0.8554731011390686,
            -0.9242149591445923, -0.35700637102127075, 0.7367409467697144, -0.8970877528190613,
            0.8252156972885132, -0.3270469307899475, 0.09405569732189178, 0.23502062261104584,
            -0.5791140198707581, 0.4270469546318054, -0.04002545773983002, -0.2766353189945221,
            0.48011475801467896, -0.3270469307899475, 0.09405569732189178, 0.23502062261104584,
            -0.5791140198707581, 0.4270469546318054, -0.04002545773983002, -0.2766353189945221,
            0.48011475801467896 }
        assert_close_list(want_out, vals(ret.quantized), 1e-5, "quantized")
        assert.are.same({ 2, 3 }, ret.indices.shape)
        assert_equal_list({ 7, 0, 3, 4, 3, 4 }, vals(ret.indices), "indices")
        assert_close_list({ -0.03057972341775894 }, { ret.entropy_aux_loss:item() }, 1e-5, "aux")
        assert_close_list({ 0.22957806289196014, 1.342710018157959, 0.3229339122772217 },
            { br.per_sample_entropy:item(), br.batch_entropy:item(), br.commitment:item() },
            1e-5, "loss breakdown")

        -- straight-through: the output's gradient passes to x as if quantization were identity,
        -- plus the entropy and commitment terms' own gradients
        local loss = (ret.quantized * G24()):sum() + ret.entropy_aux_loss
        loss:backward()
        assert_close_list({ 0.03701525926589966, 0.15390010178089142, 0.04532092437148094,
            -0.12965348362922668, -0.13604788482189178, 0.013452727347612381,
            0.14324508607387543, 0.06318311393260956, 0.08444566279649734, -0.10974974185228348,
            -0.14316150546073914, 0.03315860405564308, 0.08616305887699127, 0.1384819746017456,
            -0.012075544334948063, -0.14494235813617706, -0.16483761370182037,
            0.009085260331630707, 0.16969822347164154, 0.08170295506715775, 0.06193513050675392,
            -0.13096389174461365, -0.13200050592422485, 0.06034386530518532 }, vals(x.grad), 1e-5,
            "x.grad")

        -- the default inv_temperature = 100
        assert_close_list({ -0.05223266780376434 }, { l(x).entropy_aux_loss:item() }, 1e-5,
            "aux at inv_temperature 100")

        l:eval()
        local re = l(x)
        assert_close_list(want_out, vals(re.quantized), 1e-5, "eval quantized")
        assert.are.equal(0, re.entropy_aux_loss:item())
        assert_close_list(want_out, vals(l:indices_to_codes(ret.indices)), 1e-5,
            "indices_to_codes")
    end)

    it("mask: entropy and commitment over the kept tokens only", function()
        local l = LFQ({ dim = 3, commitment_loss_weight = 0.5 })
        local x = (2 * tide.sin(0.7 * flat(18) + 0.3)):reshape(2, 3, 3):requires_grad_()
        local mask = tide.tensor({ { true, false, true }, { true, true, false } })
        local r, br = l(x, 3, true, mask)
        -- as upstream: original_input[mask] is (k, c, d), so '(b n)' merges k with c and the
        -- batch mean '... c d -> c d' reduces nothing: batch_entropy == per_sample_entropy
        assert_close_list({ 0.24282701313495636, 0.1659041792154312, 0.1659041792154312,
            0.4856540262699127 }, { r.entropy_aux_loss:item(), br.per_sample_entropy:item(),
            br.batch_entropy:item(), br.commitment:item() }, 1e-5, "masked losses")
        r.entropy_aux_loss:backward()
        assert_close_list({ -0.03407996520400047, 0.05691182613372803, 0.08194413036108017, 0, 0,
            0, -0.07958835363388062, -0.06390908360481262, 0.021020572632551193,
            -0.03140978515148163, 0.058406125754117966, 0.08155971020460129, 0.027161559090018272,
            -0.07920403778553009, -0.02084515616297722, 0, 0, 0 }, vals(x.grad), 1e-5,
            "masked x.grad")
    end)

    it("image input, two codebooks of 2 bits: indices shape, aux loss, grad", function()
        local lb = LFQ({ codebook_size = 4, num_codebooks = 2 })
        assert.is_false(lb.has_projections)
        local xb = (1.5 * tide.cos(0.37 * flat(32) + 0.1)):reshape(2, 4, 2, 2):requires_grad_()
        local rb = lb(xb)
        local want = { 1.0, 1.0, 1.0, 1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0,
            1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0,
            -1.0, 1.0, 1.0 }
        assert_close_list(want, vals(rb.quantized), 0, "quantized")
        assert.are.same({ 2, 2, 2, 2 }, rb.indices.shape)
        assert_equal_list({ 2, 0, 2, 1, 2, 1, 2, 1, 3, 0, 2, 0, 2, 1, 2, 1 }, vals(rb.indices),
            "indices")
        assert_close_list({ -0.05179906636476517 }, { rb.entropy_aux_loss:item() }, 1e-5, "aux")
        local loss = rb.quantized:sum() + rb.entropy_aux_loss
        loss:backward()
        local g = vals(xb.grad)
        local want_g = {}
        for i = 1, 32 do want_g[i] = 1 end
        want_g[5], want_g[22] = 1.0354994535446167, 1.0012847185134888
        assert_close_list(want_g, g, 1e-5, "xb.grad")
        assert_close_list(want, vals(lb:indices_to_codes(rb.indices)), 0, "indices_to_codes")
    end)
end)
