-- ported_scripts189_spec.lua — lucidrains/vector-quantize-pytorch's
-- vector_quantize_pytorch/vector_quantize_pytorch.py (commit 0d7d1aa8): the helpers (exists,
-- default, identity, l2norm, cdist, ema_inplace, pack_one, gumbel_sample at temperature 0
-- (argmax), laplace_smoothing, batched_bincount, straight_through), Codebook (at this commit
-- EuclideanCodebook and CosineSimCodebook are one class; use_cosine_sim = False) and
-- VectorQuantize, ported line for line at tiny sizes (dim 4, codebook_size 6, batch 2, seq 5)
-- on the EMA path: training forward (dist, argmax, one-hot, quantize by einsum, EMA of
-- cluster_size / embed_avg / embed with decay 0.8 and eps 1e-5, expire_codes_ with
-- threshold_ema_dead_code 0), eval forward (quantize by gather, no EMA), project_in/out
-- identity, the straight-through estimator and the commitment loss (weight 1.0).
-- The Python line stands above each Lua line that differs from it.
-- Left out (not on this path): kmeans init (kmeans_init = False: the embed is initialised from a
-- given tensor, not uniform_init), distributed sync, cosine sim, affine params, orthogonal /
-- diversity losses, masks, topk, stochastic sampling (sample_codebook_temp = 0), the in-place
-- optimizer, multiple heads. VectorQuantize's rotation_trick defaults to True when dim > 1 at this
-- commit, so rotation_trick = false is passed to get the straight-through estimator.
-- Reference values: PyTorch 1.13 running the same code with einops' calls written out in torch ops
-- (einops / einx are not installed in the venv). Indices (embed_ind, one-hot classes) are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local einops = tide.einops
local unpack_list = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

local rearrange, reduce, einsum = einops.rearrange, einops.reduce, einops.einsum

-- def exists(val):
local function exists(val)
    -- return val is not None
    return val ~= nil
end

local function default(val, d)
    -- return val if exists(val) else d
    if exists(val) then return val end
    return d
end

local function identity(t)
    return t
end

-- def l2norm(t, dim = -1,  eps = 1e-6):
local function l2norm(t, dim, eps)
    -- return F.normalize(t, p = 2, dim = dim, eps = eps)
    return F.normalize(t, { p = 2, dim = dim or -1, eps = eps or 1e-6 })
end

-- def cdist(x, y, eps = 1e-8):
local function cdist(x, y, eps)
    eps = eps or 1e-8
    -- x2 = reduce(x ** 2, 'b n d -> b n', 'sum')
    local x2 = reduce(x ^ 2, "b n d -> b n", "sum")
    local y2 = reduce(y ^ 2, "b n d -> b n", "sum")
    -- xy = einsum('b i d, b j d -> b i j', x, y) * -2
    local xy = einsum(x, y, "b i d, b j d -> b i j") * -2
    -- return (rearrange(x2, 'b i -> b i 1') + rearrange(y2, 'b j -> b 1 j') + xy)
    --     .clamp(min = eps).sqrt()
    return (rearrange(x2, "b i -> b i 1") + rearrange(y2, "b j -> b 1 j") + xy)
        :clamp({ min = eps }):sqrt()
end

-- def ema_inplace(old, new, decay, weight = None):
local function ema_inplace(old, new, decay, weight)
    -- if old.grad is populated, add it to new and set it to None
    if exists(old.grad) then
        new:add_(old.grad)
        old.grad = nil
    end
    -- weight = default(weight, 1.)  (a tensor weight is not on this path)
    weight = default(weight, 1.)
    -- new = new.to(old)
    new = new:to(old)
    -- old.data.lerp_(new, (1. - decay) * weight)
    old.data:lerp_(new, (1. - decay) * weight)
end

-- def pack_one(t, pattern):
local function pack_one(t, pattern)
    -- packed, ps = pack([t], pattern)
    local packed, ps = einops.pack({ t }, pattern)
    local function unpack_one(to_unpack, unpack_pattern)
        -- unpacked, = unpack(to_unpack, ps, default(unpack_pattern, pattern))
        local unpacked = unpack_list(einops.unpack(to_unpack, ps, default(unpack_pattern, pattern)))
        return unpacked
    end
    return packed, unpack_one
end

-- def gumbel_sample(logits, temperature = 1., stochastic = False, straight_through = False,
--                   dim = -1, training = True, topk = None):
-- (stochastic, topk and the straight-through softmax are off: temperature 0)
local function gumbel_sample(logits, opts)
    local dim = opts.dim or -1
    -- dtype, size = logits.dtype, logits.shape[dim]
    local dtype, size = logits.dtype, logits:size(dim)
    local sampling_logits = logits
    -- ind = sampling_logits.argmax(dim = dim)
    local ind = sampling_logits:argmax({ dim = dim })
    -- one_hot = F.one_hot(ind, size).type(dtype)
    local one_hot = F.one_hot(ind, size):type(dtype)
    return ind, one_hot
end

-- def laplace_smoothing(x, n_categories, eps = 1e-5, dim = -1):
local function laplace_smoothing(x, n_categories, eps, dim)
    eps, dim = eps or 1e-5, dim or -1
    -- denom = x.sum(dim = dim, keepdim = True)
    local denom = x:sum({ dim = dim, keepdim = true })
    return (x + eps) / (denom + n_categories * eps)
end

-- def batched_bincount(x, *, minlength):
local function batched_bincount(x, minlength)
    -- batch, dtype, device = x.shape[0], x.dtype, x.device
    local batch, dtype, device = x:size(1), x.dtype, x.device
    -- target = torch.zeros(batch, minlength, dtype = dtype, device = device)
    local target = tide.zeros(batch, minlength, { dtype = dtype, device = device })
    -- values = torch.ones_like(x)
    local values = tide.ones_like(x)
    -- target.scatter_add_(-1, x, values)
    target:scatter_add_(-1, x, values)
    return target
end

-- def straight_through(src, tgt):
local function straight_through(src, tgt)
    -- return src + (tgt - src).detach()
    return src + (tgt - src):detach()
end

-- class Codebook(Module):
local Codebook = nn.Module:extend("Codebook")
-- def __init__(self, dim, codebook_size, num_codebooks = 1, kmeans_init = False, ...,
--              decay = 0.8, eps = 1e-5, threshold_ema_dead_code = 2, ...):
-- (embed, num_codebooks x codebook_size x dim, is given instead of uniform_init's draw)
function Codebook:init(dim, codebook_size, opts)
    self.transform_input = identity
    self.decay = opts.decay or 0.8
    self.ema_update = true
    -- embed = uniform_init(num_codebooks, codebook_size, dim)
    local embed = opts.embed
    assert(embed:size(3) == dim)
    self.codebook_size = codebook_size
    self.num_codebooks = 1
    self.eps = opts.eps or 1e-5
    self.threshold_ema_dead_code = opts.threshold_ema_dead_code
    self.has_dead_code_replacement = self.threshold_ema_dead_code > 0
    self.gumbel_sample = gumbel_sample
    self.sample_codebook_temp = opts.sample_codebook_temp
    -- self.register_buffer('initted', tensor(not kmeans_init))
    self:register_buffer("initted", tide.tensor(true))
    -- self.register_buffer('cluster_size', torch.ones(num_codebooks, codebook_size))
    self:register_buffer("cluster_size", tide.ones(self.num_codebooks, codebook_size))
    self:register_buffer("embed_avg", embed:clone())
    self.learnable_codebook = false
    self:register_buffer("embed", embed)
end

-- def expire_codes_(self, batch_samples, seq_mask = None):
function Codebook:expire_codes_(_batch_samples)
    -- if not self.has_dead_code_replacement or not self.training:
    if not self.has_dead_code_replacement or not self.training then
        return
    end
    error("dead code replacement is not ported (threshold_ema_dead_code = 0)")
end

-- def update_ema(self):
function Codebook:update_ema()
    -- cluster_size = laplace_smoothing(self.cluster_size, self.codebook_size, self.eps)
    --     * self.cluster_size.sum(dim = -1, keepdim = True)
    local cluster_size = laplace_smoothing(self.cluster_size, self.codebook_size, self.eps)
        * self.cluster_size:sum({ dim = -1, keepdim = true })
    -- embed_normalized = self.embed_avg / rearrange(cluster_size, '... -> ... 1')
    local embed_normalized = self.embed_avg / rearrange(cluster_size, "... -> ... 1")
    -- self.embed.data.copy_(embed_normalized)
    self.embed.data:copy_(embed_normalized)
end

-- def track_cluster_size_and_embed_avg(self, flatten, embed_onehot, mask = None, ...):
function Codebook:track_cluster_size_and_embed_avg(flatten, embed_onehot)
    -- cluster_size = embed_onehot.sum(dim = 1)
    local cluster_size = embed_onehot:sum({ dim = 2 })
    -- embed_sum = einsum('h n d, h n c -> h c d', flatten, embed_onehot)
    local embed_sum = einsum(flatten, embed_onehot, "h n d, h n c -> h c d")
    embed_sum = embed_sum:contiguous()
    ema_inplace(self.cluster_size, cluster_size, self.decay)
    ema_inplace(self.embed_avg, embed_sum, self.decay)
end

-- def update_codebook(self, flatten, embed_onehot, mask = None, ..., ema_update = None):
function Codebook:update_codebook(flatten, embed_onehot, ema_update)
    ema_update = default(ema_update, self.ema_update)
    if not ema_update and not self.has_dead_code_replacement then
        return
    end
    self:track_cluster_size_and_embed_avg(flatten, embed_onehot)
    -- if ema_update and not self.manual_ema_update:
    if ema_update then
        self:update_ema()
    end
    self:expire_codes_(flatten)
end

-- def forward(self, x, sample_codebook_temp = None, mask = None, freeze_codebook = False, ...):
function Codebook:forward(x, freeze_codebook)
    local ema_update = self.ema_update
    -- needs_codebook_dim = x.ndim < 4
    local needs_codebook_dim = x.ndim < 4
    local sample_codebook_temp = self.sample_codebook_temp
    x = x:float()
    if needs_codebook_dim then
        x = rearrange(x, "... -> 1 ...")
    end
    local dtype = x.dtype
    local flatten, unpack_one = pack_one(x, "h * d")
    -- self.init_embed_(flatten, mask = mask)  (initted: kmeans_init = False)
    assert(self.initted:item())
    -- embed = self.embed if self.learnable_codebook else self.embed.detach()
    local embed = self.learnable_codebook and self.embed or self.embed:detach()
    embed = embed:to(dtype)
    -- dist = -cdist(flatten, embed)
    local dist = -cdist(flatten, embed)
    -- embed_ind, embed_onehot = self.gumbel_sample(dist, dim = -1, topk = topk,
    --     temperature = sample_codebook_temp, training = self.training)
    local embed_ind, embed_onehot = self.gumbel_sample(dist, { dim = -1,
        temperature = sample_codebook_temp, training = self.training })
    -- embed_ind = unpack_one(embed_ind, 'h *')
    embed_ind = unpack_one(embed_ind, "h *")
    local quantize
    if self.training then
        -- unpacked_onehot = unpack_one(embed_onehot, 'h * c')
        local unpacked_onehot = unpack_one(embed_onehot, "h * c")
        -- quantize = einsum('h b n ... c, h c d -> h b n ... d', unpacked_onehot, embed)
        quantize = einsum(unpacked_onehot, embed, "h b n ... c, h c d -> h b n ... d")
    else
        -- repeated_embed = repeat(embed, 'h c d -> h b c d', b = embed_ind.shape[1])
        local repeated_embed = einops.repeat_(embed, "h c d -> h b c d", { b = embed_ind:size(2) })
        -- repeated_embed_ind = repeat(embed_ind, 'h b n -> h b n d', d = embed.shape[-1])
        local repeated_embed_ind = einops.repeat_(embed_ind, "h b n -> h b n d",
            { d = embed:size(-1) })
        -- quantize = repeated_embed.gather(-2, repeated_embed_ind)
        quantize = repeated_embed:gather(-2, repeated_embed_ind)
    end
    -- if self.training and update_usage and not freeze_codebook and not exists(topk):
    if self.training and not freeze_codebook then
        self:update_codebook(flatten, embed_onehot, ema_update)
    end
    if needs_codebook_dim then
        -- quantize, embed_ind = map(lambda t: rearrange(t, '1 ... -> ...'), (quantize, embed_ind))
        quantize = rearrange(quantize, "1 ... -> ...")
        embed_ind = rearrange(embed_ind, "1 ... -> ...")
    end
    dist = unpack_one(dist, "h * d")
    return quantize, embed_ind, dist
end

-- class VectorQuantize(Module):
local VectorQuantize = nn.Module:extend("VectorQuantize")
-- def __init__(self, dim, codebook_size, codebook_dim = None, heads = 1, ..., decay = 0.8,
--              eps = 1e-5, kmeans_init = False, threshold_ema_dead_code = 0,
--              commitment_weight = 1., sample_codebook_temp = 1., rotation_trick = None, ...):
function VectorQuantize:init(dim, codebook_size, opts)
    local rotation_trick = opts.rotation_trick
    if rotation_trick == nil then rotation_trick = dim > 1 end
    self.dim = dim
    self.heads = 1
    -- codebook_dim = default(codebook_dim, dim)
    local codebook_dim = default(opts.codebook_dim, dim)
    local codebook_input_dim = codebook_dim * self.heads
    local requires_projection = codebook_input_dim ~= dim
    assert(not requires_projection, "project_in / project_out Linear layers are not ported")
    -- self.project_in = ... if requires_projection else nn.Identity()
    self.project_in = nn.Identity()
    self.project_out = nn.Identity()
    self.eps = opts.eps or 1e-5
    local commitment_weight = default(opts.commitment_weight, 1.)
    self.has_commitment_loss = commitment_weight > 0.
    self.commitment_weight = commitment_weight
    self.learnable_codebook = false
    assert(not rotation_trick, "the rotation trick is not ported: pass rotation_trick = false")
    self.rotation_trick = rotation_trick
    self.route_gradients_to_input = true
    -- self._codebook = codebook_class(**codebook_kwargs)
    self._codebook = Codebook(codebook_dim, codebook_size, {
        decay = default(opts.decay, 0.8), eps = self.eps, embed = opts.embed,
        threshold_ema_dead_code = default(opts.threshold_ema_dead_code, 0),
        sample_codebook_temp = default(opts.sample_codebook_temp, 1.),
    })
    self.codebook_size = codebook_size
    -- self.register_buffer('zero', tensor(0.), persistent = False)
    self:register_buffer("zero", tide.tensor(0.), false)
    self.freeze_codebook = false
end

-- def forward(self, x, indices = None, mask = None, ..., freeze_codebook = None, ...):
function VectorQuantize:forward(x, freeze_codebook)
    -- orig_input, input_requires_grad = x, x.requires_grad
    local _orig_input, input_requires_grad = x, x.requires_grad
    freeze_codebook = default(freeze_codebook, self.freeze_codebook)
    -- shape, dtype, device, ... = x.shape, x.dtype, x.device, ...
    local dtype, device = x.dtype, x.device
    x = self.project_in(x)
    -- x = self._codebook.transform_input(x)
    x = self._codebook.transform_input(x)
    -- quantize, embed_ind, distances = self._codebook(x, **codebook_forward_kwargs)
    local quantize, embed_ind = self._codebook(x, freeze_codebook)
    -- quantize = quantize.type(dtype)
    quantize = quantize:type(dtype)
    local commit_loss = self.zero
    local commit_quantize
    if self.training then
        -- maybe_detach = torch.detach if not self.learnable_codebook or freeze_codebook
        --     else identity
        local maybe_detach = (not self.learnable_codebook or freeze_codebook)
            and function(t) return t:detach() end or identity
        commit_quantize = maybe_detach(quantize)
        if input_requires_grad and self.route_gradients_to_input then
            -- standard STE to get gradients through VQ layer.
            quantize = straight_through(x, quantize)
        end
    end
    -- loss = tensor(0., device = device, requires_grad = self.training)
    local loss = tide.tensor(0., { device = device, requires_grad = self.training })
    if self.training then
        if self.has_commitment_loss then
            -- commit_loss = F.mse_loss(commit_quantize, x)
            commit_loss = F.mse_loss(commit_quantize, x)
            loss = loss + commit_loss * self.commitment_weight
        end
    end
    quantize = self.project_out(quantize)
    return quantize, embed_ind, loss
end

---------------------------------------------------------------------------------------------
-- data: the same formulas as the PyTorch script (0-based c, d, b, n there)
---------------------------------------------------------------------------------------------
local D, C, B, N = 4, 6, 2, 5

local function make_embed()
    -- torch.tensor([[[math.sin(0.9 * c + 1.7 * d) for d in range(D)] for c in range(C)]])
    local rows = {}
    for c = 0, C - 1 do
        local row = {}
        for d = 0, D - 1 do row[#row + 1] = math.sin(0.9 * c + 1.7 * d) end
        rows[#rows + 1] = row
    end
    return tide.tensor({ rows }, { dtype = "float32" })
end

local function make_x(step)
    -- math.cos(0.37 * (b * N + n) + 1.1 * d + step) * (1 + 0.1 * d)
    local bs = {}
    for b = 0, B - 1 do
        local ns = {}
        for n = 0, N - 1 do
            local ds = {}
            for d = 0, D - 1 do
                ds[#ds + 1] = math.cos(0.37 * (b * N + n) + 1.1 * d + step) * (1 + 0.1 * d)
            end
            ns[#ns + 1] = ds
        end
        bs[#bs + 1] = ns
    end
    return tide.tensor(bs, { dtype = "float32" })
end

local function flat(t)
    return t:detach():reshape(-1):tolist()
end

local function new_vq()
    -- VectorQuantize(dim = 4, codebook_size = 6, decay = 0.8, eps = 1e-5, kmeans_init = False,
    --     threshold_ema_dead_code = 0, commitment_weight = 1., sample_codebook_temp = 0,
    --     rotation_trick = False)
    return VectorQuantize(D, C, { decay = 0.8, eps = 1e-5, threshold_ema_dead_code = 0,
        commitment_weight = 1., sample_codebook_temp = 0, rotation_trick = false,
        embed = make_embed() })
end

-- PyTorch 1.13's values (/tmp ref script: the code above in Python, einops written out)
local WANT = {
    { q = { 0.783326924, 0.51550138, -0.916165948, -0.279415488, 0.783326924, 0.51550138,
        -0.916165948, -0.279415488, 0.783326924, 0.51550138, -0.916165948, -0.279415488,
        0.973847628, -0.350783229, -0.88345468, 0.578439772, 0.973847628, -0.350783229,
        -0.88345468, 0.578439772, 0.427379906, -0.951602101, -0.182162523, 0.998543322,
        0.427379847, -0.951602101, -0.182162508, 0.998543322, -0.44252044, -0.832267463,
        0.656986594, 0.662969232, -0.44252044, -0.832267463, 0.656986594, 0.662969232,
        -0.44252044, -0.832267463, 0.656986594, 0.662969232 },
      ind = { 2, 2, 2, 3, 3, 4, 4, 5, 5, 5 },
      loss = 0.25936991,
      xgrad = { 1.01083362, 1.99917269, 3.01049829, 3.94978452, 5.0074501, 5.97975922,
        6.99534607, 7.95783615, 8.99775696, 9.95959663, 10.9870234, 11.973485, 12.9735403,
        13.9847288, 14.9850216, 15.9517212, 16.9558411, 17.9709873, 18.9926605, 19.9754696,
        20.9648514, 21.9935856, 22.972208, 23.9776192, 24.9484043, 25.993454, 26.9918137,
        27.9970436, 28.9795418, 29.9946785, 30.9718018, 32.0268898, 32.97295, 34.0082245,
        34.9931183, 36.0318336, 36.973011, 38.0262871, 39.0109215, 40.0279808 } },
    { q = { 0.738454282, -0.498399228, -0.957846105, 0.335740864, 0.738454282, -0.498399228,
        -0.957846105, 0.335740864, 0.138229534, -0.994803965, -0.302090406, 0.914085805,
        0.138229549, -0.994803965, -0.302090406, 0.914085805, -0.655377388, -0.748868763,
        0.587969422, 0.910705447, -0.655377388, -0.748868763, 0.587969422, 0.910705447,
        -0.655377388, -0.748868763, 0.587969422, 0.910705447, -0.655377388, -0.748868763,
        0.587969422, 0.910705447, -0.977526426, -0.0830891132, 0.998937607, -0.174326122,
        -0.977526426, -0.0830891132, 0.998937607, -0.174326122 },
      ind = { 3, 3, 4, 4, 5, 5, 5, 5, 6, 6 },
      loss = 0.173489511,
      xgrad = { 0.990092397, 1.9971534, 2.98799467, 3.95716095, 4.97304964, 5.98186445,
        6.99331474, 7.98045826, 8.98466873, 9.9972229, 10.9732332, 11.9752111, 12.9674158,
        13.9948692, 14.9916077, 15.9960508, 16.9933186, 17.9876442, 18.9686584, 20.0114079,
        20.9848804, 21.9994583, 22.9904747, 24.0188885, 24.9829216, 26.0164108, 27.0096035,
        28.0176506, 28.9877129, 30.0362129, 31.0234509, 32.0078621, 33.0147057, 34.022892,
        35.0095978, 36.0450935, 37.03022, 38.0403214, 39.0082359, 40.0231552 } },
}
local WANT_CLUSTER_SIZE = { 0.639999986, 1.12, 1.36000001, 1.36000001, 1.91999996, 1.04000008 }
local WANT_EMBED_AVG = { 0, 0.634665489, -0.163546309, -0.592521369, 0.928656578, 0.380654275,
    -1.04892993, -0.693407059, 0.856866181, -0.761752129, -1.37743342, 0.20708546,
    -0.0036697383, -1.38456702, -0.551478505, 1.12820637, -1.46299517, -1.2789216, 1.09765267,
    1.97178435, -0.836923838, 0.166435465, 1.11023068, 0.0916933045 }
local WANT_EMBED = { 0, 0.991657376, -0.255539179, -0.925807655, 0.829156935, 0.339869589,
    -0.936543763, -0.619112909, 0.630049109, -0.560112238, -1.01281941, 0.152268827,
    -0.00269833882, -1.01806474, -0.40549919, 0.829564095, -0.761978865, -0.666106939,
    0.571695745, 1.02697396, -0.804733217, 0.160033852, 1.06752777, 0.0881664976 }
local WANT_EVAL_IND = { 4, 4, 5, 5, 5, 6, 6, 6, 1, 1 }

describe("ported vector-quantize-pytorch (VectorQuantize, EMA codebook)", function()
    it("helpers: l2norm, cdist, laplace_smoothing, batched_bincount, ema_inplace", function()
        -- F.normalize's eps keeps a zero row zero
        assert_close_list({ 0.6, 0.8, 0, 0, 0, 0, 0, 0 },
            flat(l2norm(tide.tensor({ { 3., 4, 0, 0 }, { 0, 0, 0, 0 } }))), 1e-6, "l2norm")
        -- cdist's expansion agrees with the direct distance, and is clamped at eps, not NaN
        local x = make_x(0):view(1, B * N, D)
        local e = make_embed()
        local direct = ((rearrange(x, "b i d -> b i 1 d") - rearrange(e, "b j d -> b 1 j d")) ^ 2)
            :sum({ dim = -1 }):sqrt()
        assert_close_list(flat(direct), flat(cdist(x, e)), 1e-5, "cdist")
        local self_dist = flat(cdist(e, e):diagonal({ dim1 = 2, dim2 = 3 }))
        for i = 1, C do
            assert.is_true(self_dist[i] >= 1e-4 - 1e-9 and self_dist[i] < 1e-3, "cdist clamp")
        end
        -- one-hot counting (the codebook's) and batched_bincount agree on step 0's codes
        local ind = tide.tensor({ WANT[1].ind }):long()
        local counts = batched_bincount(ind, C)
        assert.same({ { 0, 3, 2, 2, 3, 0 } }, counts:tolist())
        assert.same(counts:tolist(), F.one_hot(ind, C):sum({ dim = 2 }):tolist())
        assert_close_list({ 9.99993972e-07, 0.299999207, 0.199999794, 0.199999794, 0.299999207,
            9.99993972e-07 }, flat(laplace_smoothing(counts:float(), C, 1e-5)), 1e-6,
            "laplace_smoothing")
        -- ema_inplace: old.data.lerp_(new, 1 - decay), old keeps its identity
        local old = tide.ones(1, 3)
        local same = old
        ema_inplace(old, tide.tensor({ { 0., 2, 6 } }), 0.8)
        assert.equal(same, old)
        assert_close_list({ 0.8, 1.2, 2.0 }, flat(old), 1e-6, "ema_inplace")
    end)

    it("training forward: quantize, codes, loss, STE gradient and EMA buffers over 2 steps",
        function()
        local vq = new_vq()
        vq:train()
        for step = 1, 2 do
            -- x = make_x(step).requires_grad_()
            local x = make_x(step - 1):requires_grad_()
            local q, ind, loss = vq(x)
            assert.same({ B, N, D }, { q:size(1), q:size(2), q:size(3) })
            assert.same({ 2, B, N }, { ind:dim(), ind:size(1), ind:size(2) })
            assert.equal("int64", ind.dtype)
            local w = WANT[step]
            assert_close_list(w.q, flat(q), 1e-5, "quantize step " .. step)
            assert.same(w.ind, flat(ind))
            assert_close_list({ w.loss }, { loss:item() }, 1e-5, "loss step " .. step)
            assert.is_true(loss.requires_grad)
            -- (q * torch.arange(1, B * N * D + 1).float().reshape(B, N, D)).sum().add(loss)
            --     .backward()
            local total = (q * tide.arange(1, B * N * D + 1):float():reshape(B, N, D)):sum()
            total:add(loss):backward()
            assert_close_list(w.xgrad, flat(x.grad), 1e-5, "x.grad step " .. step)
        end
        local cb = vq._codebook
        assert_close_list(WANT_CLUSTER_SIZE, flat(cb.cluster_size), 1e-5, "cluster_size")
        assert_close_list(WANT_EMBED_AVG, flat(cb.embed_avg), 1e-5, "embed_avg")
        assert_close_list(WANT_EMBED, flat(cb.embed), 1e-5, "embed")
        assert.is_false(cb.embed.requires_grad)
        -- the buffers are in the state dict (zero is not persistent)
        local sd = vq:state_dict()
        assert.is_not_nil(sd["_codebook.embed_avg"])
        assert.is_nil(sd["zero"])

        -- eval: quantize by gather, no EMA update, loss a constant 0
        vq:eval()
        local x = make_x(2)
        local q, ind, loss = vq(x)
        assert.same(WANT_EVAL_IND, flat(ind))
        -- quantize is the codebook's rows at the codes
        local rows = {}
        for _, k in ipairs(WANT_EVAL_IND) do
            for d = 1, D do rows[#rows + 1] = WANT_EMBED[(k - 1) * D + d] end
        end
        assert_close_list(rows, flat(q), 1e-5, "eval quantize")
        assert.equal(0, loss:item())
        assert.is_false(loss.requires_grad)
        assert.is_false(q.requires_grad)
        assert_close_list(WANT_EMBED, flat(cb.embed), 1e-6, "embed after eval")
        assert_close_list(WANT_CLUSTER_SIZE, flat(cb.cluster_size), 1e-6, "cluster_size eval")
    end)
end)
