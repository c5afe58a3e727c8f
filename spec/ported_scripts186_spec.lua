-- ported_scripts186_spec.lua — aqlaboratory/openfold's Evoformer pieces, ported line for line at
-- tiny sizes (c_m 8, c_z 8, c_hidden 4, heads 2, N_seq 3, N_res 5, batch 1):
-- openfold/model/primitives.py (Linear with its init variants, LayerNorm, softmax_no_cast,
-- _attention, Attention with gating and biases), openfold/model/triangular_multiplicative_update.py
-- (TriangleMultiplicationOutgoing / Incoming), openfold/model/triangular_attention.py
-- (TriangleAttention starting / ending node), openfold/model/outer_product_mean.py
-- (OuterProductMean) and openfold/utils/tensor_utils.py (permute_final_dims, flatten_final_dims).
-- The Python line stands above each Lua line that differs from it. Dims are 1-based, so
-- permute_final_dims takes 1-based indices of the final dims ((2, 0, 1) becomes {3, 1, 2}).
-- Not ported (the stock PyTorch path only): chunking (chunk_layer, _attention_chunked_trainable,
-- OuterProductMean._chunk), inplace_safe / _inference_forward, the low-memory and fused kernels
-- (attention_core, DeepSpeed DS4Sci_EvoformerAttention, LMA, flash_attn), the fp16 / bf16 casts
-- (is_fp16_enabled, autocast) and Linear's precision argument.
-- The values are checked against PyTorch 1.13 in float64 with the same weights: each parameter
-- set by a formula over its flat index (the inits replaced; "final" would zero every output),
-- masks with zeros, each module's output and the gradient w.r.t. one weight.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

---------------------------------------------------------------------------------------------
-- openfold/utils/tensor_utils.py
---------------------------------------------------------------------------------------------
-- def permute_final_dims(tensor: torch.Tensor, inds: List[int]):
local function permute_final_dims(tensor, inds)
    -- zero_index = -1 * len(inds)
    local zero_index = tensor:dim() - #inds
    -- first_inds = list(range(len(tensor.shape[:zero_index])))
    local perm = {}
    for i = 1, zero_index do
        perm[i] = i
    end
    -- return tensor.permute(first_inds + [zero_index + i for i in inds])
    for _, i in ipairs(inds) do
        perm[#perm + 1] = zero_index + i
    end
    return tensor:permute(perm)
end

-- def flatten_final_dims(t: torch.Tensor, no_dims: int):
local function flatten_final_dims(t, no_dims)
    -- return t.reshape(t.shape[:-no_dims] + (-1,))
    local shape = {}
    for i = 1, t:dim() - no_dims do
        shape[i] = t:size(i)
    end
    shape[#shape + 1] = -1
    return t:reshape(shape)
end

---------------------------------------------------------------------------------------------
-- openfold/model/primitives.py
---------------------------------------------------------------------------------------------
-- a tensor's shape with extra sizes appended (Python's t.shape[:-1] + (a, b))
local function shape_plus(t, drop, ...)
    local shape = {}
    for i = 1, t:dim() - drop do
        shape[i] = t:size(i)
    end
    for _, s in ipairs({ ... }) do
        shape[#shape + 1] = s
    end
    return shape
end

-- def _calculate_fan(linear_weight_shape, fan="fan_in"):
local function _calculate_fan(linear_weight_shape, fan)
    fan = fan or "fan_in"
    -- fan_out, fan_in = linear_weight_shape
    local fan_out, fan_in = linear_weight_shape[1], linear_weight_shape[2]
    local f
    if fan == "fan_in" then
        f = fan_in
    elseif fan == "fan_out" then
        f = fan_out
    elseif fan == "fan_avg" then
        f = (fan_in + fan_out) / 2
    else
        error("Invalid fan option")
    end
    return f
end

-- truncnorm.std(a=-2, b=2, loc=0, scale=1) (scipy's; a constant)
local TRUNCNORM_STD = 0.87962566103423978

-- def trunc_normal_init_(weights, scale=1.0, fan="fan_in"):
local function trunc_normal_init_(weights, scale, fan)
    scale = scale or 1.0
    local shape = weights.shape
    local f = _calculate_fan(shape, fan)
    scale = scale / math.max(1, f)
    local a, b = -2, 2
    -- std = math.sqrt(scale) / truncnorm.std(a=a, b=b, loc=0, scale=1)
    local std = math.sqrt(scale) / TRUNCNORM_STD
    -- samples = truncnorm.rvs(a=a, b=b, loc=0, scale=std, size=size)  (a, b in units of std)
    -- GAP: scipy's truncnorm.rvs draw; nn.init.trunc_normal_ with absolute bounds is the same law
    tide.no_grad(function()
        nn.init.trunc_normal_(weights, 0, std, a * std, b * std)
    end)
end

local function lecun_normal_init_(weights)
    trunc_normal_init_(weights, 1.0)
end

local function he_normal_init_(weights)
    trunc_normal_init_(weights, 2.0)
end

local function glorot_uniform_init_(weights)
    -- nn.init.xavier_uniform_(weights, gain=1)
    nn.init.xavier_uniform_(weights, { gain = 1 })
end

local function final_init_(weights)
    tide.no_grad(function()
        weights:fill_(0.0)
    end)
end

local function gating_init_(weights)
    tide.no_grad(function()
        weights:fill_(0.0)
    end)
end

local function normal_init_(weights)
    -- torch.nn.init.kaiming_normal_(weights, nonlinearity="linear")
    nn.init.kaiming_normal_(weights, { nonlinearity = "linear" })
end

-- class Linear(nn.Linear):
local Linear = nn.Linear:extend("Linear")
-- def __init__(self, in_dim, out_dim, bias=True, init="default", init_fn=None, precision=None):
function Linear:init(in_dim, out_dim, opts)
    opts = opts or {}
    local bias = opts.bias ~= false
    local init, init_fn = opts.init or "default", opts.init_fn
    -- super(Linear, self).__init__(in_dim, out_dim, bias=bias)
    nn.Linear.init(self, in_dim, out_dim, bias)
    tide.no_grad(function()
        if bias then
            self.bias:fill_(0)
        end
        if init_fn ~= nil then
            init_fn(self.weight, self.bias)
        elseif init == "default" then
            lecun_normal_init_(self.weight)
        elseif init == "relu" then
            he_normal_init_(self.weight)
        elseif init == "glorot" then
            glorot_uniform_init_(self.weight)
        elseif init == "gating" then
            gating_init_(self.weight)
            if bias then
                self.bias:fill_(1.0)
            end
        elseif init == "normal" then
            normal_init_(self.weight)
        elseif init == "final" then
            final_init_(self.weight)
        else
            error("Invalid init string.")
        end
    end)
    -- (precision and the bf16 / deepspeed branches of forward: not ported; nn.Linear's forward)
end

-- class LayerNorm(nn.Module):
local LayerNorm = nn.Module:extend("LayerNorm")
function LayerNorm:init(c_in, eps)
    -- self.c_in = (c_in,)
    self.c_in = { c_in }
    self.eps = eps or 1e-5
    -- self.weight = nn.Parameter(torch.ones(c_in))
    self.weight = nn.Parameter(tide.ones(c_in))
    self.bias = nn.Parameter(tide.zeros(c_in))
end

function LayerNorm:forward(x)
    -- out = nn.functional.layer_norm(x, self.c_in, self.weight, self.bias, self.eps)
    return F.layer_norm(x, self.c_in, self.weight, self.bias, self.eps)
end

-- def softmax_no_cast(t: torch.Tensor, dim: int = -1) -> torch.Tensor:
local function softmax_no_cast(t, dim)
    -- s = torch.nn.functional.softmax(t, dim=dim)  (the bf16 autocast branch: not ported)
    return F.softmax(t, { dim = dim or -1 })
end

-- def _attention(query, key, value, biases: List[torch.Tensor]) -> torch.Tensor:
local function _attention(query, key, value, biases)
    -- [*, H, C_hidden, K]
    -- key = permute_final_dims(key, (1, 0))
    key = permute_final_dims(key, { 2, 1 })
    -- [*, H, Q, K]
    -- a = torch.matmul(query, key)
    local a = tide.matmul(query, key)
    -- for b in biases: a += b
    for _, b in ipairs(biases) do
        a = a + b
    end
    a = softmax_no_cast(a, -1)
    -- [*, H, Q, C_hidden]
    a = tide.matmul(a, value)
    return a
end

-- class Attention(nn.Module):
local Attention = nn.Module:extend("Attention")
-- def __init__(self, c_q, c_k, c_v, c_hidden, no_heads, gating=True):
function Attention:init(c_q, c_k, c_v, c_hidden, no_heads, gating)
    if gating == nil then gating = true end
    self.c_q, self.c_k, self.c_v = c_q, c_k, c_v
    self.c_hidden = c_hidden
    self.no_heads = no_heads
    self.gating = gating
    -- self.linear_q = Linear(self.c_q, self.c_hidden * self.no_heads, bias=False, init="glorot")
    self.linear_q = Linear(self.c_q, self.c_hidden * self.no_heads,
        { bias = false, init = "glorot" })
    self.linear_k = Linear(self.c_k, self.c_hidden * self.no_heads,
        { bias = false, init = "glorot" })
    self.linear_v = Linear(self.c_v, self.c_hidden * self.no_heads,
        { bias = false, init = "glorot" })
    -- self.linear_o = Linear(self.c_hidden * self.no_heads, self.c_q, init="final")
    self.linear_o = Linear(self.c_hidden * self.no_heads, self.c_q, { init = "final" })
    self.linear_g = nil
    if self.gating then
        self.linear_g = Linear(self.c_q, self.c_hidden * self.no_heads, { init = "gating" })
    end
    self.sigmoid = nn.Sigmoid()
end

function Attention:_prep_qkv(q_x, kv_x, apply_scale)
    if apply_scale == nil then apply_scale = true end
    -- [*, Q/K/V, H * C_hidden]
    local q = self.linear_q(q_x)
    local k = self.linear_k(kv_x)
    local v = self.linear_v(kv_x)
    -- [*, Q/K, H, C_hidden]
    -- q = q.view(q.shape[:-1] + (self.no_heads, -1))
    q = q:view(shape_plus(q, 1, self.no_heads, -1))
    k = k:view(shape_plus(k, 1, self.no_heads, -1))
    v = v:view(shape_plus(v, 1, self.no_heads, -1))
    -- [*, H, Q/K, C_hidden]
    q = q:transpose(-2, -3)
    k = k:transpose(-2, -3)
    v = v:transpose(-2, -3)
    if apply_scale then
        -- q /= math.sqrt(self.c_hidden)
        q = q / math.sqrt(self.c_hidden)
    end
    return q, k, v
end

function Attention:_wrap_up(o, q_x)
    if self.linear_g ~= nil then
        local g = self.sigmoid(self.linear_g(q_x))
        -- [*, Q, H, C_hidden]
        -- g = g.view(g.shape[:-1] + (self.no_heads, -1))
        g = g:view(shape_plus(g, 1, self.no_heads, -1))
        o = o * g
    end
    -- [*, Q, H * C_hidden]
    o = flatten_final_dims(o, 2)
    -- [*, Q, C_q]
    o = self.linear_o(o)
    return o
end

-- def forward(self, q_x, kv_x, biases=None, ...):  (use_memory_efficient_kernel, deepspeed, lma
-- and flash: not ported; the stock path)
function Attention:forward(q_x, kv_x, biases)
    if biases == nil then
        biases = {}
    end
    -- q, k, v = self._prep_qkv(q_x, kv_x, apply_scale=not use_deepspeed_evo_attention)
    local q, k, v = self:_prep_qkv(q_x, kv_x, true)
    local o = _attention(q, k, v, biases)
    o = o:transpose(-2, -3)
    o = self:_wrap_up(o, q_x)
    return o
end

---------------------------------------------------------------------------------------------
-- openfold/model/triangular_multiplicative_update.py
---------------------------------------------------------------------------------------------
-- class TriangleMultiplicativeUpdate(BaseTriangleMultiplicativeUpdate):
local TriangleMultiplicativeUpdate = nn.Module:extend("TriangleMultiplicativeUpdate")
-- def __init__(self, c_z, c_hidden, _outgoing=True):
function TriangleMultiplicativeUpdate:init(c_z, c_hidden, _outgoing)
    if _outgoing == nil then _outgoing = true end
    -- (BaseTriangleMultiplicativeUpdate.__init__)
    self.c_z = c_z
    self.c_hidden = c_hidden
    self._outgoing = _outgoing
    -- self.linear_g = Linear(self.c_z, self.c_z, init="gating")
    self.linear_g = Linear(self.c_z, self.c_z, { init = "gating" })
    self.linear_z = Linear(self.c_hidden, self.c_z, { init = "final" })
    self.layer_norm_in = LayerNorm(self.c_z)
    self.layer_norm_out = LayerNorm(self.c_hidden)
    self.sigmoid = nn.Sigmoid()
    -- (TriangleMultiplicativeUpdate.__init__)
    self.linear_a_p = Linear(self.c_z, self.c_hidden)
    self.linear_a_g = Linear(self.c_z, self.c_hidden, { init = "gating" })
    self.linear_b_p = Linear(self.c_z, self.c_hidden)
    self.linear_b_g = Linear(self.c_z, self.c_hidden, { init = "gating" })
end

-- def _combine_projections(self, a, b, _inplace_chunk_size=None):
function TriangleMultiplicativeUpdate:_combine_projections(a, b)
    if self._outgoing then
        -- a = permute_final_dims(a, (2, 0, 1))
        a = permute_final_dims(a, { 3, 1, 2 })
        -- b = permute_final_dims(b, (2, 1, 0))
        b = permute_final_dims(b, { 3, 2, 1 })
    else
        a = permute_final_dims(a, { 3, 2, 1 })
        b = permute_final_dims(b, { 3, 1, 2 })
    end
    -- (the _inplace_chunk_size loop: not ported)
    -- p = torch.matmul(a, b)
    local p = tide.matmul(a, b)
    -- return permute_final_dims(p, (1, 2, 0))
    return permute_final_dims(p, { 2, 3, 1 })
end

-- def forward(self, z, mask=None, inplace_safe=False, ...):  (inplace_safe: not ported)
function TriangleMultiplicativeUpdate:forward(z, mask)
    if mask == nil then
        -- mask = z.new_ones(z.shape[:-1])
        mask = z:new_ones(shape_plus(z, 1))
    end
    mask = mask:unsqueeze(-1)
    z = self.layer_norm_in(z)
    local a = mask
    a = a * self.sigmoid(self.linear_a_g(z))
    a = a * self.linear_a_p(z)
    local b = mask
    b = b * self.sigmoid(self.linear_b_g(z))
    b = b * self.linear_b_p(z)
    -- (a.std() / b.std() rescaling under is_fp16_enabled(): not ported)
    local x = self:_combine_projections(a, b)
    x = self.layer_norm_out(x)
    x = self.linear_z(x)
    local g = self.sigmoid(self.linear_g(z))
    x = x * g
    return x
end

-- class TriangleMultiplicationOutgoing / Incoming: partialmethod(__init__, _outgoing=True/False)
local TriangleMultiplicationOutgoing = TriangleMultiplicativeUpdate:extend(
    "TriangleMultiplicationOutgoing")
function TriangleMultiplicationOutgoing:init(c_z, c_hidden)
    TriangleMultiplicativeUpdate.init(self, c_z, c_hidden, true)
end
local TriangleMultiplicationIncoming = TriangleMultiplicativeUpdate:extend(
    "TriangleMultiplicationIncoming")
function TriangleMultiplicationIncoming:init(c_z, c_hidden)
    TriangleMultiplicativeUpdate.init(self, c_z, c_hidden, false)
end

---------------------------------------------------------------------------------------------
-- openfold/model/triangular_attention.py
---------------------------------------------------------------------------------------------
local TriangleAttention = nn.Module:extend("TriangleAttention")
-- def __init__(self, c_in, c_hidden, no_heads, starting=True, inf=1e9):
function TriangleAttention:init(c_in, c_hidden, no_heads, starting, inf)
    if starting == nil then starting = true end
    self.c_in = c_in
    self.c_hidden = c_hidden
    self.no_heads = no_heads
    self.starting = starting
    self.inf = inf or 1e9
    self.layer_norm = LayerNorm(self.c_in)
    -- self.linear = Linear(c_in, self.no_heads, bias=False, init="normal")
    self.linear = Linear(c_in, self.no_heads, { bias = false, init = "normal" })
    self.mha = Attention(self.c_in, self.c_in, self.c_in, self.c_hidden, self.no_heads)
end

-- def forward(self, x, mask=None, chunk_size=None, ...):  (chunk_size: not ported)
function TriangleAttention:forward(x, mask)
    if mask == nil then
        mask = x:new_ones(shape_plus(x, 1))
    end
    if not self.starting then
        x = x:transpose(-2, -3)
        mask = mask:transpose(-1, -2)
    end
    x = self.layer_norm(x)
    -- mask_bias = (self.inf * (mask - 1))[..., :, None, None, :]
    local mask_bias = (self.inf * (mask - 1))[{ "...", {}, tide.newaxis, tide.newaxis, {} }]
    -- triangle_bias = permute_final_dims(self.linear(x), (2, 0, 1))
    local triangle_bias = permute_final_dims(self.linear(x), { 3, 1, 2 })
    triangle_bias = triangle_bias:unsqueeze(-4)
    local biases = { mask_bias, triangle_bias }
    -- x = self.mha(q_x=x, kv_x=x, biases=biases, ...)
    x = self.mha(x, x, biases)
    if not self.starting then
        x = x:transpose(-2, -3)
    end
    return x
end

-- TriangleAttentionStartingNode = TriangleAttention
local TriangleAttentionStartingNode = TriangleAttention
-- class TriangleAttentionEndingNode(TriangleAttention): partialmethod(__init__, starting=False)
local TriangleAttentionEndingNode = TriangleAttention:extend("TriangleAttentionEndingNode")
function TriangleAttentionEndingNode:init(c_in, c_hidden, no_heads, inf)
    TriangleAttention.init(self, c_in, c_hidden, no_heads, false, inf)
end

---------------------------------------------------------------------------------------------
-- openfold/model/outer_product_mean.py
---------------------------------------------------------------------------------------------
local OuterProductMean = nn.Module:extend("OuterProductMean")
-- def __init__(self, c_m, c_z, c_hidden, eps=1e-3):
function OuterProductMean:init(c_m, c_z, c_hidden, eps)
    self.c_m = c_m
    self.c_z = c_z
    self.c_hidden = c_hidden
    self.eps = eps or 1e-3
    self.layer_norm = nn.LayerNorm(c_m)
    self.linear_1 = Linear(c_m, c_hidden)
    self.linear_2 = Linear(c_m, c_hidden)
    -- self.linear_out = Linear(c_hidden ** 2, c_z, init="final")
    self.linear_out = Linear(c_hidden ^ 2, c_z, { init = "final" })
end

function OuterProductMean:_opm(a, b)
    -- [*, N_res, N_res, C, C]
    local outer = tide.einsum("...bac,...dae->...bdce", a, b)
    -- [*, N_res, N_res, C * C]
    -- outer = outer.reshape(outer.shape[:-2] + (-1,))
    outer = outer:reshape(shape_plus(outer, 2, -1))
    -- [*, N_res, N_res, C_z]
    outer = self.linear_out(outer)
    return outer
end

-- def _forward(self, m, mask=None, chunk_size=None, inplace_safe=False):  (chunking, the fp16
-- cast of forward: not ported)
function OuterProductMean:forward(m, mask)
    if mask == nil then
        mask = m:new_ones(shape_plus(m, 1))
    end
    -- [*, N_seq, N_res, C_m]
    local ln = self.layer_norm(m)
    -- [*, N_seq, N_res, C]
    mask = mask:unsqueeze(-1)
    local a = self.linear_1(ln)
    a = a * mask
    local b = self.linear_2(ln)
    b = b * mask
    a = a:transpose(-2, -3)
    b = b:transpose(-2, -3)
    local outer = self:_opm(a, b)
    -- [*, N_res, N_res, 1]
    local norm = tide.einsum("...abc,...adc->...bdc", mask, mask)
    norm = norm + self.eps
    -- [*, N_res, N_res, C_z]
    outer = outer / norm
    return outer
end

---------------------------------------------------------------------------------------------
-- checks
---------------------------------------------------------------------------------------------
-- the reference script's weights: 0.5 * sin(0.37 * n + 1.3 * k + 0.1) over the flat index n
-- (0-based), k the parameter's place in the sorted list of names (1-based)
local function formula(shape, k)
    local n = 1
    for _, s in ipairs(shape) do
        n = n * s
    end
    return (tide.arange(n, { dtype = "float64" }) * 0.37 + (1.3 * k + 0.1)):sin():mul(0.5)
        :view(shape)
end

local function set_weights(m)
    local params = m:named_parameters()
    local names = {}
    -- (ipairs gives the {name, p} pairs: pairs on Lua 5.1 / LuaJIT, without __pairs, would
    -- also list them)
    for _, np in ipairs(params) do
        names[#names + 1] = np[1]
    end
    table.sort(names)
    tide.no_grad(function()
        for k, name in ipairs(names) do
            params[name]:copy_(formula(params[name].shape, k))
        end
    end)
    return names
end

local function wts(shape)
    local n = 1
    for _, s in ipairs(shape) do
        n = n * s
    end
    return (tide.arange(n, { dtype = "float64" }) * 0.29):cos():view(shape)
end

local function inputs()
    local z = formula({ 1, 5, 5, 8 }, 0.5) * 3
    local msa = formula({ 1, 3, 5, 8 }, 0.25) * 3
    -- pmask[0, 1, 3] = 0; pmask[0, 4, 0] = 0; pmask[0, 2, :] = 0; pmask[0, 2, 2] = 1
    local pmask = tide.ones(1, 5, 5, { dtype = "float64" })
    pmask[{ 1, 2, 4 }] = 0
    pmask[{ 1, 5, 1 }] = 0
    pmask[{ 1, 3, {} }] = 0
    pmask[{ 1, 3, 3 }] = 1
    local mmask = tide.ones(1, 3, 5, { dtype = "float64" })
    mmask[{ 1, 3, 2 }] = 0
    mmask[{ 1, 1, 5 }] = 0
    return z, msa, pmask, mmask
end

-- PyTorch 1.13, float64 (/tmp reference script): loss = (out * wts).sum(), (out ** 2).sum(),
-- the first six outputs, and the named weight's gradient of the loss
local REF = {
    tri_mul_out = { loss = 0.385782076426, sq = 22.9564253492, grad_of = "linear_a_p.weight",
        first = { -0.05540066799, 0.3966136646, 0.4293466634, -0.03877313455, -0.1238368436,
            0.394887907 },
        grad = { 0.06595721062, 0.1738852184, 0.1361901927, 0.01379855376, -0.101729583,
            -0.1398197304, -0.08917113832, -0.002500742554, 0.04869173449, 0.02828618754,
            0.02281162913, 0.02684590043, 0.02953965182, 0.0214740409, 0.0006714737728,
            -0.02553133321, -0.09621652219, -0.14615819, -0.09913100338, -0.009178134917,
            0.05785485975, 0.06130516216, 0.007719882774, -0.05369887129, -0.07205317897,
            0.01790021159, 0.01465189557, -0.0460833482, -0.1034720647, -0.1073156704,
            -0.04703882913, 0.041619765 } },
    tri_mul_in = { loss = 0.469712754773, sq = 24.8511739772, grad_of = "linear_b_p.weight",
        first = { -0.1103699868, 0.4631447381, 0.4930719388, -0.1082894586, -0.2025828246,
            0.4653720293 },
        grad = { -0.7019303133, -0.6128671555, -0.2937336464, -0.003456463351, 0.0532941236,
            -0.1596890802, -0.4903286874, -0.6833137705, 0.01958605949, -0.003910783764,
            -0.004015590562, 0.01097575551, 0.02607359001, 0.02840248655, 0.01460970526,
            -0.007092207956, 0.3399871753, 0.3845843045, 0.1719501031, -0.08206043806,
            -0.1699143796, -0.01105977136, 0.3012578252, 0.5501430082, -0.05438332096,
            -0.01840052639, 0.0007652072064, -0.003426806993, -0.02500378825, -0.04911524613,
            -0.06028314194, -0.05088580704 } },
    tri_att_start = { loss = -0.833297203995, sq = 28.030779923, grad_of = "mha.linear_q.weight",
        first = { 0.08255687998, -0.03617470272, -0.2886488531, -0.3400300784, -0.5254742232,
            -0.4475769056 },
        grad = { -0.009940496516, -0.01578770156, -0.01213809233, -0.003282655986,
            0.004840936113, 0.007930827159, 0.005578250204, 0.00131791759, 0.009315196387,
            0.01584142968, 0.01162950542, 0.001898856923, -0.00639079449, -0.008432904488,
            -0.004151915395, 0.001891565367, -0.008383562541, -0.01537420646, -0.01073847787,
            -0.0004526132407, 0.007730489201, 0.008657662601, 0.002589043296, -0.005038843489,
            0.007176232106, 0.01440139672, 0.009494311459, -0.001008514798, -0.008815963884,
            -0.008597710241, -0.0009410295394, 0.008020417359, 0.0006567391947, 0.00290554415,
            0.004729489925, 0.004366104248, 0.001110922468, -0.004192961582, -0.009479547784,
            -0.0124447174, -0.002633524778, -0.004134684741, -0.005345161297, -0.004771836846,
            -0.001717623372, 0.003218981098, 0.008321728186, 0.01153712864, 0.004523705915,
            0.005227854679, 0.005785055042, 0.005020645805, 0.00226783959, -0.002139143216,
            -0.006890245444, -0.0102501371, -0.006265123291, -0.006149104661, -0.006034705088,
            -0.005104348949, -0.002743477054, 0.0009889588101, 0.005232174405,
            0.008626065967 } },
    tri_att_end = { loss = -1.0006303845, sq = 29.2395106837, grad_of = "linear.weight",
        first = { -0.09470187092, 0.1274257649, -0.4332109748, -0.2192602819, -0.6184801344,
            -0.3853934138 },
        grad = { -0.01346439669, -0.001415227633, 0.002240956669, -0.002067662138,
            -0.01000160499, -0.01586221915, -0.01578204144, -0.009856270722, -0.002335789559,
            -0.001530395623, 0.008380924868, 0.0160132625, 0.01184875883, -0.006037082171,
            -0.03041346787, -0.04838891789 } },
    opm = { loss = 1.84164405041, sq = 1.77560568409, grad_of = "linear_1.weight",
        first = { -0.02894704259, 0.003417379193, 0.03545375635, 0.06326588528, 0.08345437767,
            0.09352915311 },
        grad = { -0.08470552926, -0.7928951073, -0.8058265252, -0.2618076487, 0.4694411519,
            0.9917005909, 1.091358385, 0.8410804384, -2.434280901, -1.837129614, -1.468064157,
            -1.270105226, -1.033314166, -0.5470326263, 0.2446548404, 1.171679725,
            -0.3567348782, 0.4597440544, 0.5396030013, 0.03148264042, -0.6568256999,
            -1.090901265, -1.046991881, -0.6286042303, 2.36958944, 1.920501094, 1.565917519,
            1.275814391, 0.9142032594, 0.3492050467, -0.4345197498, -1.285672859 } },
}

local function check(name, m, x, mask)
    local ref = REF[name]
    m = m:double()
    set_weights(m)
    local out = m(x, mask)
    assert.same({ 1, 5, 5, 8 }, out.shape)
    local loss = (out * wts(out.shape)):sum()
    loss:backward()
    assert_close_list({ ref.loss, ref.sq }, { loss:item(), (out ^ 2):sum():item() }, 1e-8,
        name .. " loss, sum of squares")
    assert_close_list(ref.first, out:flatten()[{ { 1, 6 } }]:totable(), 1e-8, name .. " out")
    local g = m:named_parameters()[ref.grad_of].grad
    assert_close_list(ref.grad, g:flatten():totable(), 1e-8, name .. " grad " .. ref.grad_of)
end

describe("ported openfold Evoformer pieces (primitives, triangle updates, OPM)", function()
    it("permute_final_dims and flatten_final_dims", function()
        local t = tide.arange(24, { dtype = "float64" }):view(2, 3, 4)
        -- permute_final_dims(t, (1, 0)).flatten()[:8] == [0, 4, 8, 1, 5, 9, 2, 6]
        local p = permute_final_dims(t, { 2, 1 })
        assert.same({ 2, 4, 3 }, p.shape)
        assert.same({ 0, 4, 8, 1, 5, 9, 2, 6 }, p:flatten()[{ { 1, 8 } }]:totable())
        assert.same({ 2, 12 }, flatten_final_dims(t, 2).shape)
    end)

    it("Linear's inits: trunc-normal statistics, glorot, normal std, gating, final", function()
        tide.manual_seed(186)
        local n = 128
        -- "default": LeCun trunc normal, std sqrt(1 / fan_in), cut at 2 of the untruncated std
        for _, c in ipairs({ { "default", 1 }, { "relu", 2 } }) do
            local w = Linear(n, n, { init = c[1] }).weight
            local std = math.sqrt(c[2] / n)
            assert(math.abs(w:std():item() - std) < 0.03 * std, c[1] .. " std " .. w:std():item())
            assert(math.abs(w:mean():item()) < 0.03 * std, c[1] .. " mean")
            assert(w:abs():max():item() <= 2 * std / TRUNCNORM_STD + 1e-6, c[1] .. " bound")
            assert(w:abs():max():item() > 1.9 * std / TRUNCNORM_STD, c[1] .. " reaches the cut")
        end
        local bound = math.sqrt(6 / (n + 64))
        local g = Linear(n, 64, { init = "glorot" })
        assert(g.weight:abs():max():item() <= bound and g.weight:abs():max():item() > 0.95 * bound)
        assert.equal(0, g.bias:abs():sum():item())
        local nw = Linear(n, n, { init = "normal" }).weight
        assert(math.abs(nw:std():item() - 1 / math.sqrt(n)) < 0.03 / math.sqrt(n))
        local gate = Linear(4, 3, { init = "gating" })
        assert.same({ 1, 1, 1 }, gate.bias:totable())
        assert.equal(0, gate.weight:abs():sum():item())
        local fin = Linear(4, 3, { init = "final" })
        assert.equal(0, fin.weight:abs():sum():item() + fin.bias:abs():sum():item())
        assert.is_nil(Linear(4, 3, { bias = false }).bias)
        assert.has_error(function() Linear(4, 3, { init = "bogus" }) end)
        -- Attention's projections keep their inits: gated output starts at zero ("final")
        local att = Attention(8, 8, 8, 4, 2)
        local x = tide.randn(1, 5, 8)
        assert.equal(0, att(x, x):abs():sum():item())
    end)

    it("TriangleMultiplicationOutgoing / Incoming match PyTorch", function()
        local z, _, pmask = inputs()
        check("tri_mul_out", TriangleMultiplicationOutgoing(8, 4), z, pmask)
        check("tri_mul_in", TriangleMultiplicationIncoming(8, 4), z, pmask)
    end)

    it("TriangleAttention starting / ending node match PyTorch", function()
        local z, _, pmask = inputs()
        check("tri_att_start", TriangleAttentionStartingNode(8, 4, 2), z, pmask)
        check("tri_att_end", TriangleAttentionEndingNode(8, 4, 2), z, pmask)
    end)

    it("OuterProductMean matches PyTorch", function()
        local _, msa, _, mmask = inputs()
        check("opm", OuterProductMean(8, 8, 4), msa, mmask)
    end)
end)
