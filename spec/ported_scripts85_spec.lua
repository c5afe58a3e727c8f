-- ported_scripts85_spec.lua — lucidrains/performer-pytorch's
-- performer_pytorch/performer_pytorch.py FAVOR+ core (orthogonal_matrix_chunk,
-- gaussian_orthogonal_random_matrix, softmax_kernel, generalized_kernel, linear_attention,
-- causal_linear_attention_noncuda, FastAttention with its projection_matrix buffer and redraw,
-- a SelfAttention block) and rtqichen/torchdiffeq's
-- fixed-grid solvers (_impl/fixed_grid.py's Euler / Midpoint / RK4 through rk_common.py's
-- rk4_alt_step_func, solvers.py's FixedGridODESolver.integrate, the part of odeint.py and
-- misc.py's _check_inputs those need) with examples/ode_demo.py's ODEFunc trained through odeint,
-- ported line for line at tiny sizes. The Python line stands above each Lua line that differs.
-- Dims are 1-based. The reference values come from PyTorch 1.13 running the same code on the
-- same inputs (fx below; the projection matrix is fixed on both sides, as its draw differs).
local tide = require("tide")
local nn = tide.nn
local optim = tide.optim
local einops = tide.einops
local partial = tide.utils.partial

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- deterministic inputs shared with the PyTorch script: sin(arange(n) * a + b).view(shape)
local function fx(shape, a, b)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    return tide.sin(tide.arange(n):float() * a + b):view(shape)
end

-- the values of tensors (each flattened) and numbers, in one list
local function values(...)
    local out = {}
    for _, x in ipairs({ ... }) do
        if type(x) == "number" then
            out[#out + 1] = x
        else
            for _, e in ipairs(x:reshape(-1):tolist()) do out[#out + 1] = e end
        end
    end
    return out
end

---------------------------------------------------------------------------------------------
-- 1. lucidrains/performer-pytorch performer_pytorch.py
---------------------------------------------------------------------------------------------
local function exists(val)
    return val ~= nil
end

local function default(val, d)
    if exists(val) then return val end
    return d
end

-- def empty(tensor): return tensor.numel() == 0
local function empty(tensor)
    return tensor:numel() == 0
end

-- def softmax_kernel(data, *, projection_matrix, is_query, normalize_data=True, eps=1e-4,
--     device = None):
local function softmax_kernel(data, kw)
    local projection_matrix, is_query = kw.projection_matrix, kw.is_query
    local normalize_data = kw.normalize_data ~= false
    local eps = kw.eps or 1e-4
    -- b, h, *_ = data.shape
    local b, h = data:size(1), data:size(2)
    -- data_normalizer = (data.shape[-1] ** -0.25) if normalize_data else 1.
    local data_normalizer = normalize_data and data:size(-1) ^ -0.25 or 1
    -- ratio = (projection_matrix.shape[0] ** -0.5)
    local ratio = projection_matrix:size(1) ^ -0.5
    -- projection = repeat(projection_matrix, 'j d -> b h j d', b = b, h = h)
    local projection = einops["repeat"](projection_matrix, "j d -> b h j d", { b = b, h = h })
    projection = projection:type_as(data)
    -- data_dash = torch.einsum('...id,...jd->...ij', (data_normalizer * data), projection)
    local data_dash = tide.einsum("...id,...jd->...ij", data_normalizer * data, projection)
    -- diag_data = data ** 2
    local diag_data = data ^ 2
    -- diag_data = torch.sum(diag_data, dim=-1)
    diag_data = tide.sum(diag_data, { dim = -1 })
    diag_data = (diag_data / 2.0) * (data_normalizer ^ 2)
    -- diag_data = diag_data.unsqueeze(dim=-1)
    diag_data = diag_data:unsqueeze(-1)
    if is_query then
        -- data_dash = ratio * (torch.exp(data_dash - diag_data -
        --     torch.amax(data_dash, dim=-1, keepdim=True).detach()) + eps)
        data_dash = ratio * (tide.exp(data_dash - diag_data -
            tide.amax(data_dash, { dim = -1, keepdim = true }):detach()) + eps)
    else
        -- data_dash = ratio * (torch.exp(data_dash - diag_data -
        --     torch.amax(data_dash, dim=(-1, -2), keepdim=True).detach()) + eps)
        data_dash = ratio * (tide.exp(data_dash - diag_data -
            tide.amax(data_dash, { dim = { -1, -2 }, keepdim = true }):detach()) + eps)
    end
    return data_dash:type_as(data)
end

-- def generalized_kernel(data, *, projection_matrix, kernel_fn = nn.ReLU(),
--     kernel_epsilon = 0.001, normalize_data = True, device = None):
local function generalized_kernel(data, kw)
    local projection_matrix = kw.projection_matrix
    local kernel_fn = kw.kernel_fn or nn.ReLU()
    local kernel_epsilon = kw.kernel_epsilon or 0.001
    local normalize_data = kw.normalize_data ~= false
    local b, h = data:size(1), data:size(2)
    local data_normalizer = normalize_data and data:size(-1) ^ -0.25 or 1
    if projection_matrix == nil then
        return kernel_fn(data_normalizer * data) + kernel_epsilon
    end
    local projection = einops["repeat"](projection_matrix, "j d -> b h j d", { b = b, h = h })
    projection = projection:type_as(data)
    local data_dash = tide.einsum("...id,...jd->...ij", data_normalizer * data, projection)
    local data_prime = kernel_fn(data_dash) + kernel_epsilon
    return data_prime:type_as(data)
end

-- def orthogonal_matrix_chunk(cols, device = None):
local function orthogonal_matrix_chunk(cols, device)
    -- unstructured_block = torch.randn((cols, cols), device = device)
    local unstructured_block = tide.randn({ cols, cols }, { device = device })
    -- q, r = torch.linalg.qr(unstructured_block.cpu(), mode = 'reduced')
    local q, r = tide.linalg.qr(unstructured_block:cpu(), { mode = "reduced" })
    -- q, r = map(lambda t: t.to(device), (q, r))
    q, r = q:to(device or "cpu"), r:to(device or "cpu") -- luacheck: ignore r
    -- return q.t()
    return q:t()
end

-- def gaussian_orthogonal_random_matrix(nb_rows, nb_columns, scaling = 0, device = None):
local function gaussian_orthogonal_random_matrix(kw)
    local nb_rows, nb_columns, scaling, device = kw.nb_rows, kw.nb_columns, kw.scaling or 0,
        kw.device
    -- nb_full_blocks = int(nb_rows / nb_columns)
    local nb_full_blocks = math.floor(nb_rows / nb_columns)
    local block_list = {}
    -- for _ in range(nb_full_blocks):
    for _ = 1, nb_full_blocks do
        local q = orthogonal_matrix_chunk(nb_columns, device)
        block_list[#block_list + 1] = q
    end
    local remaining_rows = nb_rows - nb_full_blocks * nb_columns
    if remaining_rows > 0 then
        local q = orthogonal_matrix_chunk(nb_columns, device)
        -- block_list.append(q[:remaining_rows])
        block_list[#block_list + 1] = q:narrow(1, 1, remaining_rows)
    end
    -- final_matrix = torch.cat(block_list)
    local final_matrix = tide.cat(block_list)
    local multiplier
    if scaling == 0 then
        -- multiplier = torch.randn((nb_rows, nb_columns), device = device).norm(dim = 1)
        multiplier = tide.randn({ nb_rows, nb_columns }, { device = device }):norm({ dim = 2 })
    elseif scaling == 1 then
        -- multiplier = math.sqrt((float(nb_columns))) * torch.ones((nb_rows,), device = device)
        multiplier = math.sqrt(nb_columns) * tide.ones({ nb_rows }, { device = device })
    else
        -- raise ValueError(f'Invalid scaling {scaling}')
        error("Invalid scaling " .. tostring(scaling), 0)
    end
    -- return torch.diag(multiplier) @ final_matrix
    return tide.diag(multiplier):matmul(final_matrix)
end

-- def linear_attention(q, k, v):
local function linear_attention(q, k, v)
    -- k_cumsum = k.sum(dim = -2)
    local k_cumsum = k:sum({ dim = -2 })
    -- D_inv = 1. / torch.einsum('...nd,...d->...n', q, k_cumsum.type_as(q))
    local D_inv = 1 / tide.einsum("...nd,...d->...n", q, k_cumsum:type_as(q))
    local context = tide.einsum("...nd,...ne->...de", k, v)
    local out = tide.einsum("...de,...nd,...n->...ne", context, q, D_inv)
    return out
end

-- def causal_linear_attention_noncuda(q, k, v, chunk_size = 128, eps = 1e-6):
local function causal_linear_attention_noncuda(q, k, v, chunk_size, eps)
    chunk_size, eps = chunk_size or 128, eps or 1e-6
    local last_k_cumsum = 0
    local last_context_cumsum = 0
    local outs = {}
    -- for q, k, v in zip(*map(lambda t: t.chunk(chunk_size, dim = -2), (q, k, v))):
    local qs, ks, vs = q:chunk(chunk_size, { dim = -2 }), k:chunk(chunk_size, { dim = -2 }),
        v:chunk(chunk_size, { dim = -2 })
    for i = 1, #qs do
        q, k, v = qs[i], ks[i], vs[i]
        -- k_cumsum = last_k_cumsum + k.cumsum(dim=-2)
        local k_cumsum = last_k_cumsum + k:cumsum(-2)
        -- D_inv = 1. / torch.einsum('...nd,...nd->...n', q, k_cumsum.type_as(q) + eps)
        local D_inv = 1 / tide.einsum("...nd,...nd->...n", q, k_cumsum:type_as(q) + eps)
        local context = tide.einsum("...nd,...ne->...nde", k, v)
        -- context_cumsum = last_context_cumsum + context.cumsum(dim=-3)
        local context_cumsum = last_context_cumsum + context:cumsum(-3)
        local out = tide.einsum("...nde,...nd,...n->...ne", context_cumsum, q, D_inv)
        -- last_k_cumsum = k_cumsum[:, :, -1:]
        last_k_cumsum = k_cumsum:narrow(3, k_cumsum:size(3), 1)
        -- last_context_cumsum = context_cumsum[:, :, -1:]
        last_context_cumsum = context_cumsum:narrow(3, context_cumsum:size(3), 1)
        outs[#outs + 1] = out
    end
    -- return torch.cat(outs, dim = -2)
    return tide.cat(outs, { dim = -2 })
end

-- class FastAttention(nn.Module):
local FastAttention = nn.Module:extend("FastAttention")
-- def __init__(self, dim_heads, nb_features = None, ortho_scaling = 0, causal = False,
--     generalized_attention = False, kernel_fn = nn.ReLU(), no_projection = False):
function FastAttention:init(dim_heads, kw)
    kw = kw or {}
    -- nb_features = default(nb_features, int(dim_heads * math.log(dim_heads)))
    local nb_features = default(kw.nb_features, math.floor(dim_heads * math.log(dim_heads)))
    self.dim_heads = dim_heads
    self.nb_features = nb_features
    self.ortho_scaling = kw.ortho_scaling or 0
    -- self.create_projection = partial(gaussian_orthogonal_random_matrix,
    --     nb_rows = self.nb_features, nb_columns = dim_heads, scaling = ortho_scaling)
    self.create_projection = partial(gaussian_orthogonal_random_matrix,
        { nb_rows = self.nb_features, nb_columns = dim_heads, scaling = self.ortho_scaling })
    local projection_matrix = self.create_projection()
    self:register_buffer("projection_matrix", projection_matrix)
    self.generalized_attention = kw.generalized_attention or false
    self.kernel_fn = kw.kernel_fn or nn.ReLU()
    self.no_projection = kw.no_projection or false
    self.causal = kw.causal or false
    if self.causal then
        -- no fast_transformers CUDA kernel: the non-cuda version, as the ImportError path
        self.causal_linear_fn = causal_linear_attention_noncuda
    end
end

-- @torch.no_grad()
-- def redraw_projection_matrix(self, device):
function FastAttention:redraw_projection_matrix(device)
    tide.no_grad(function()
        -- projections = self.create_projection(device = device)
        local projections = self.create_projection({ device = device })
        self.projection_matrix:copy_(projections)
    end)
end

function FastAttention:forward(q, k, v)
    local device = q.device
    if self.no_projection then
        q = q:softmax(-1)
        -- k = torch.exp(k) if self.causal else k.softmax(dim = -2)
        k = self.causal and tide.exp(k) or k:softmax(-2)
    elseif self.generalized_attention then
        -- create_kernel = partial(generalized_kernel, kernel_fn = self.kernel_fn,
        --     projection_matrix = self.projection_matrix, device = device)
        local create_kernel = partial(generalized_kernel, { kernel_fn = self.kernel_fn,
            projection_matrix = self.projection_matrix, device = device })
        q, k = create_kernel(q), create_kernel(k)
    else
        local create_kernel = partial(softmax_kernel,
            { projection_matrix = self.projection_matrix, device = device })
        -- q = create_kernel(q, is_query = True)
        q = create_kernel(q, { is_query = true })
        k = create_kernel(k, { is_query = false })
    end
    -- attn_fn = linear_attention if not self.causal else self.causal_linear_fn
    local attn_fn = self.causal and self.causal_linear_fn or linear_attention
    local out = attn_fn(q, k, v)
    return out
end

-- class Attention(nn.Module): (local_heads = 0: no LocalAttention, dropout 0)
local Attention = nn.Module:extend("Attention")
function Attention:init(dim, kw)
    kw = kw or {}
    local heads, dim_head = kw.heads or 8, kw.dim_head or 64
    -- assert dim % heads == 0, 'dimension must be divisible by number of heads'
    assert(dim % heads == 0, "dimension must be divisible by number of heads")
    local inner_dim = dim_head * heads
    self.fast_attention = FastAttention(dim_head, { nb_features = kw.nb_features,
        causal = kw.causal })
    self.heads = heads
    self.global_heads = heads - 0
    -- self.to_q = nn.Linear(dim, inner_dim, bias = qkv_bias)
    self.to_q = nn.Linear(dim, inner_dim, { bias = false })
    self.to_k = nn.Linear(dim, inner_dim, { bias = false })
    self.to_v = nn.Linear(dim, inner_dim, { bias = false })
    self.to_out = nn.Linear(inner_dim, dim, { bias = true })
    self.dropout = nn.Dropout(0)
end

function Attention:forward(x)
    -- b, n, _, h, gh = *x.shape, self.heads, self.global_heads
    local h, gh = self.heads, self.global_heads
    local context = x
    local q, k, v = self.to_q(x), self.to_k(context), self.to_v(context)
    -- q, k, v = map(lambda t: rearrange(t, 'b n (h d) -> b h n d', h = h), (q, k, v))
    local function split(t) return einops.rearrange(t, "b n (h d) -> b h n d", { h = h }) end
    q, k, v = split(q), split(k), split(v)
    -- (q, lq), (k, lk), (v, lv) = map(lambda t: (t[:, :gh], t[:, gh:]), (q, k, v))
    local lq = q:narrow(2, gh + 1, h - gh)
    q, k, v = q:narrow(2, 1, gh), k:narrow(2, 1, gh), v:narrow(2, 1, gh)
    local attn_outs = {}
    if not empty(q) then
        local out = self.fast_attention(q, k, v)
        attn_outs[#attn_outs + 1] = out
    end
    assert(empty(lq))
    local out = tide.cat(attn_outs, { dim = 2 })
    out = einops.rearrange(out, "b h n d -> b n (h d)")
    out = self.to_out(out)
    return self.dropout(out)
end

-- class SelfAttention(Attention):
local SelfAttention = Attention:extend("SelfAttention")

describe("ported performer-pytorch FAVOR+", function()
    -- P, q, k, v as the PyTorch script: fx((6, 4), 0.7, 0.3) * 1.5, fx((1, 2, 5, 4), ...)
    local P = fx({ 6, 4 }, 0.7, 0.3) * 1.5
    local function qkv()
        return fx({ 1, 2, 5, 4 }, 0.37, 0.1):requires_grad_(),
            fx({ 1, 2, 5, 4 }, 0.53, 1.2):requires_grad_(),
            fx({ 1, 2, 5, 4 }, 0.91, -0.4):requires_grad_()
    end

    it("gaussian_orthogonal_random_matrix: shape, rows orthogonal within a block", function()
        tide.manual_seed(0)
        local m = gaussian_orthogonal_random_matrix({ nb_rows = 6, nb_columns = 4, scaling = 1 })
        assert.are.same({ 6, 4 }, m.shape)
        -- scaling 1: every row has norm sqrt(4), a full block's rows are orthogonal
        local g = m:narrow(1, 1, 4):matmul(m:narrow(1, 1, 4):t())
        assert.is_true(tide.allclose(g, 4 * tide.eye(4), { atol = 1e-4 }))
        local g2 = m:narrow(1, 5, 2):matmul(m:narrow(1, 5, 2):t())
        assert.is_true(tide.allclose(g2, 4 * tide.eye(2), { atol = 1e-4 }))
        -- scaling 0: chi-distributed row norms, still orthogonal rows within a block
        local m0 = gaussian_orthogonal_random_matrix({ nb_rows = 6, nb_columns = 4 })
        local g0 = m0:narrow(1, 1, 4):matmul(m0:narrow(1, 1, 4):t())
        local off = g0 - tide.diag(tide.diagonal(g0))
        assert.is_true(off:abs():max():item() < 1e-4)
        assert.is_true(tide.diagonal(g0):min():item() > 0)
        assert.has_error(function()
            gaussian_orthogonal_random_matrix({ nb_rows = 6, nb_columns = 4, scaling = 2 })
        end, "Invalid scaling 2")
    end)

    it("softmax_kernel, generalized_kernel, linear and causal attention match PyTorch", function()
        local q, k, v = qkv()
        local qp = softmax_kernel(q, { projection_matrix = P, is_query = true })
        local kp = softmax_kernel(k, { projection_matrix = P, is_query = false })
        assert_close_list({ 0.0010235675, 0.17558454, 0.0027994721, 0.038740125, 0.01702019,
            0.0057573789, 5.6607709 }, values(qp[1][2][3], qp:sum():item()), 1e-4,
            "qp")
        assert_close_list({ 0.001928048, 0.22262883, 0.00285926, 0.09000127, 0.01044623,
            0.019031893, 3.295197 }, values(kp[1][1][5], kp:sum():item()), 1e-4, "kp")
        local g = generalized_kernel(q, { projection_matrix = P })
        assert_close_list({ 0.043340128, 0.001, 0.73990434, 0.001, 1.1047981, 0.001, 38.202194 },
            values(g[1][2][4], g:sum():item()), 1e-4, "gk")
        local la = linear_attention(qp, kp, v)
        assert_close_list({ 0.19795161, -0.018489467, -0.22064731, -0.25235289, 1.8736803 },
            values(la[1][2][5], la:sum():item()), 1e-4, "la")
        -- chunk_size = 2 is torch's chunk count: rows 1-3, then 4-5
        local ca = causal_linear_attention_noncuda(qp, kp, v, 2)
        assert_close_list({ -0.15442050, 0.17952539, 0.37478632, 0.28052169, -0.86718434,
            -0.13909963, 0.69644076, 0.99397492, 1.9908657 },
            values(ca[1][1][5], ca[1][2][1], ca:sum():item()), 1e-4,
            "ca")
        -- (la.pow(2).sum() + ca.pow(2).sum()).backward()
        local total = la:pow(2):sum() + ca:pow(2):sum()
        total:backward()
        assert_close_list({ -1.7255472, -0.7272408, 7.7290492, 0.00030419207, -0.37873927,
            -0.57911062, -0.50657606 }, values(q.grad:sum():item(), k.grad:sum():item(),
            v.grad:sum():item(), q.grad[1][2][3]), 1e-3, "grads")
    end)

    it("FastAttention with the fixed buffer equals the kernels; redraw replaces it", function()
        tide.manual_seed(1)
        local q, k, v = qkv()
        for _, causal in ipairs({ false, true }) do
            local fa = FastAttention(4, { nb_features = 6, causal = causal })
            assert.are.same({ 6, 4 }, fa.projection_matrix.shape)
            fa.projection_matrix:copy_(P)
            local qp = softmax_kernel(q, { projection_matrix = P, is_query = true })
            local kp = softmax_kernel(k, { projection_matrix = P, is_query = false })
            local want = causal and causal_linear_attention_noncuda(qp, kp, v)
                or linear_attention(qp, kp, v)
            assert.is_true(tide.allclose(fa(q, k, v), want, { atol = 1e-6 }))
            fa:redraw_projection_matrix("cpu")
            assert.is_false(tide.allclose(fa.projection_matrix, P))
            assert.is_false(fa.projection_matrix.requires_grad)
        end
        -- the default nb_features: int(dim_heads * math.log(dim_heads)) = int(5.545) = 5
        assert.are.equal(5, FastAttention(4).nb_features)
    end)

    it("SelfAttention block trains 2 Adam steps, loss finite and falling", function()
        tide.manual_seed(2)
        local attn = SelfAttention(8, { heads = 2, dim_head = 4, nb_features = 6, causal = true })
        local x = tide.randn({ 2, 5, 8 })
        local y = tide.randn({ 2, 5, 8 })
        local opt = optim.Adam(attn:parameters(), { lr = 1e-2 })
        local losses = {}
        for step = 1, 3 do
            opt:zero_grad()
            local out = attn(x)
            assert.are.same({ 2, 5, 8 }, out.shape)
            local loss = (out - y):pow(2):mean()
            losses[step] = loss:item()
            assert_finite(losses[step], "loss")
            if step < 3 then -- 2 Adam steps, the third pass measures the loss after them
                loss:backward()
                opt:step()
            end
        end
        assert.is_true(losses[3] < losses[2] and losses[2] < losses[1])
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. rtqichen/torchdiffeq fixed-grid solvers and examples/ode_demo.py's ODEFunc
---------------------------------------------------------------------------------------------
-- _one_third = 1 / 3; _two_thirds = 2 / 3 (rk_common.py)
local _one_third, _two_thirds = 1 / 3, 2 / 3

-- def rk4_alt_step_func(func, t0, dt, t1, y0, f0=None, perturb=False):
local function rk4_alt_step_func(func, t0, dt, t1, y0, f0)
    local k1 = f0
    if k1 == nil then
        k1 = func(t0, y0)
    end
    local k2 = func(t0 + dt * _one_third, y0 + dt * k1 * _one_third)
    local k3 = func(t0 + dt * _two_thirds, y0 + dt * (k2 - k1 * _one_third))
    local k4 = func(t1, y0 + dt * (k1 - k2 + k3))
    return (k1 + 3 * (k2 + k3) + k4) * dt * 0.125
end

-- class FixedGridODESolver(metaclass=abc.ABCMeta):
local FixedGridODESolver = ported.class("FixedGridODESolver")
-- def __init__(self, func, y0, step_size=None, grid_constructor=None, interp="linear",
--     perturb=False, **unused_kwargs):
function FixedGridODESolver:__init__(func, y0, kw)
    kw = kw or {}
    -- self.atol = unused_kwargs.pop('atol')
    self.atol = kw.atol
    self.func = func
    self.y0 = y0
    self.dtype = y0.dtype
    self.device = y0.device
    self.step_size = kw.step_size
    self.interp = kw.interp or "linear"
    if self.step_size == nil then
        -- self.grid_constructor = lambda f, y0, t: t
        self.grid_constructor = kw.grid_constructor or function(_, _, t) return t end
    else
        if kw.grid_constructor == nil then
            self.grid_constructor = self._grid_constructor_from_step_size(self.step_size)
        else
            error("step_size and grid_constructor are mutually exclusive arguments.")
        end
    end
end

-- @staticmethod
-- def _grid_constructor_from_step_size(step_size):
function FixedGridODESolver._grid_constructor_from_step_size(step_size)
    return function(_, _, t)
        -- start_time = t[0]
        local start_time = t[1]
        -- end_time = t[-1]
        local end_time = t[-1]
        -- niters = torch.ceil((end_time - start_time) / step_size + 1).item()
        local niters = tide.ceil((end_time - start_time) / step_size + 1):item()
        -- t_infer = torch.arange(0, niters, dtype=t.dtype, device=t.device) * step_size
        --     + start_time
        local t_infer = tide.arange(0, niters, { dtype = t.dtype, device = t.device })
            * step_size + start_time
        -- t_infer[-1] = t[-1]
        t_infer[-1] = t[-1]
        return t_infer
    end
end

function FixedGridODESolver:integrate(t)
    local time_grid = self.grid_constructor(self.func, self.y0, t)
    -- assert time_grid[0] == t[0] and time_grid[-1] == t[-1]
    assert(time_grid[1]:item() == t[1]:item() and time_grid[-1]:item() == t[-1]:item())
    -- solution = torch.empty(len(t), *self.y0.shape, dtype=self.y0.dtype,
    --     device=self.y0.device)
    -- len(t) is t:size(1)
    local shape = { t:size(1) }
    for _, s in ipairs(self.y0.shape) do shape[#shape + 1] = s end
    local solution = tide.empty(shape, { dtype = self.y0.dtype, device = self.y0.device })
    -- solution[0] = self.y0
    solution[1] = self.y0
    -- j = 1 (0-based: t's second time)
    local j = 2
    local y0 = self.y0
    -- for t0, t1 in zip(time_grid[:-1], time_grid[1:]):
    for i = 1, time_grid:size(1) - 1 do
        local t0, t1 = time_grid[i], time_grid[i + 1]
        local dt = t1 - t0
        local dy, f0 = self:_step_func(self.func, t0, dt, t1, y0) -- luacheck: ignore f0
        local y1 = y0 + dy
        -- while j < len(t) and t1 >= t[j]:
        while j <= t:size(1) and t1 >= t[j] do
            if self.interp == "linear" then
                solution[j] = self:_linear_interp(t0, t1, y0, y1, t[j])
            else
                -- raise ValueError(f"Unknown interpolation method {self.interp}")
                error("Unknown interpolation method " .. tostring(self.interp))
            end
            j = j + 1
        end
        y0 = y1
    end
    return solution
end

function FixedGridODESolver:_linear_interp(t0, t1, y0, y1, t)
    -- if t == t0:
    if t:item() == t0:item() then
        return y0
    end
    if t:item() == t1:item() then
        return y1
    end
    local slope = (t - t0) / (t1 - t0)
    return y0 + slope * (y1 - y0)
end

-- a subclass: FixedGridODESolver's methods copied in, then its _step_func
local function solver_class(name, step_func)
    local cls = ported.class(name)
    for k, f in pairs(FixedGridODESolver) do
        if k ~= "__index" and k ~= "__name" and k ~= "__call" then cls[k] = f end
    end
    cls._step_func = step_func
    return cls
end

-- class Euler(FixedGridODESolver): def _step_func(self, func, t0, dt, t1, y0):
local Euler = solver_class("Euler", function(_, func, t0, dt, _, y0)
    local f0 = func(t0, y0)
    return dt * f0, f0
end)

-- class Midpoint(FixedGridODESolver):
local Midpoint = solver_class("Midpoint", function(_, func, t0, dt, _, y0)
    local half_dt = 0.5 * dt
    local f0 = func(t0, y0)
    local y_mid = y0 + f0 * half_dt
    return dt * func(t0 + half_dt, y_mid), f0
end)

-- class RK4(FixedGridODESolver):
local RK4 = solver_class("RK4", function(_, func, t0, dt, t1, y0)
    local f0 = func(t0, y0)
    -- return rk4_alt_step_func(func, t0, dt, t1, y0, f0=f0, perturb=self.perturb), f0
    return rk4_alt_step_func(func, t0, dt, t1, y0, f0), f0
end)

local SOLVERS = { euler = Euler, midpoint = Midpoint, rk4 = RK4 }

-- misc.py's _check_inputs, the tensor-y0 path of fixed-grid solvers, increasing t only
local function _check_inputs(func, y0, t, rtol, atol, method, options)
    -- if options is None: options = {} else: options = options.copy()
    local opts = {}
    for k, v in pairs(options or {}) do opts[k] = v end
    -- if method is None: method = 'dopri5' (not ported: fixed-grid methods only)
    assert(method ~= nil, "method: only the fixed-grid methods euler, midpoint, rk4 are ported")
    if SOLVERS[method] == nil then
        -- raise ValueError('Invalid method "{}". Must be one of {}'.format(...))
        error('Invalid method "' .. tostring(method)
            .. '". Must be one of {"euler", "midpoint", "rk4"}.', 0)
    end
    -- _check_timelike('t', t, True); _assert_increasing('t', t)
    assert(t.ndim == 1, "t must be one dimensional")
    local n = t:size(1)
    assert(n < 2 or t:narrow(1, 2, n - 1):gt(t:narrow(1, 1, n - 1)):all():item(),
        "t must be strictly increasing")
    return nil, func, y0, t, rtol, atol, method, opts
end

-- def odeint(func, y0, t, *, rtol=1e-7, atol=1e-9, method=None, options=None, event_fn=None):
local function odeint(func, y0, t, kw)
    kw = kw or {}
    local rtol, atol, method, options = kw.rtol or 1e-7, kw.atol or 1e-9, kw.method, kw.options
    local shapes
    shapes, func, y0, t, rtol, atol, method, options = -- luacheck: ignore shapes
        _check_inputs(func, y0, t, rtol, atol, method, options)
    -- solver = SOLVERS[method](func=func, y0=y0, rtol=rtol, atol=atol, **options)
    options.rtol, options.atol = rtol, atol
    local solver = SOLVERS[method](func, y0, options)
    local solution = solver:integrate(t)
    return solution
end

-- class ODEFunc(nn.Module): (hidden width 8 for 50)
local ODEFunc = nn.Module:extend("ODEFunc")
function ODEFunc:init()
    self.net = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 2))
    -- for m in self.net.modules(): if isinstance(m, nn.Linear):
    for _, m in ipairs(self.net:modules()) do
        if m.__name == "Linear" then
            -- nn.init.normal_(m.weight, mean=0, std=0.1)
            nn.init.normal_(m.weight, 0, 0.1)
            -- nn.init.constant_(m.bias, val=0)
            nn.init.constant_(m.bias, 0)
        end
    end
end

function ODEFunc:forward(_, y)
    -- return self.net(y**3)
    return self.net(y ^ 3)
end

describe("ported torchdiffeq fixed-grid odeint", function()
    it("Euler, Midpoint and RK4 solve dy/dt = -y as PyTorch's run of the same code", function()
        -- y0 = torch.tensor([1.0, 2.0]) (the dtype named: 5.1 and LuaJIT read 1.0 as an integer)
        local y0 = tide.tensor({ 1.0, 2.0 }, { dtype = "float32" })
        local t = tide.tensor({ 0.0, 0.5, 1.0 })
        local want = {
            euler = { 1, 2, 0.56, 1.12, 0.3087, 0.6174 },
            midpoint = { 1, 2, 0.61835003, 1.2367001, 0.37421173, 0.74842346 },
            rk4 = { 1, 2, 0.61283928, 1.2256786, 0.36790818, 0.73581636 },
        }
        for _, m in ipairs({ "euler", "midpoint", "rk4" }) do
            local sol = odeint(function(_, y) return -y end, y0, t,
                { method = m, options = { step_size = 0.3 } })
            assert.are.same({ 3, 2 }, sol.shape)
            assert_close_list(want[m], values(sol), 1e-5, m)
        end
        -- rk4 is within 1e-3 of exp(-t)
        local sol = odeint(function(_, y) return -y end, y0, t,
            { method = "rk4", options = { step_size = 0.1 } })
        assert.is_true(tide.allclose(sol, y0 * tide.exp(-t):unsqueeze(2), { atol = 1e-5 }))
        assert.has_error(function()
            odeint(function(_, y) return -y end, y0, t, { method = "dopri9" })
        end, 'Invalid method "dopri9". Must be one of {"euler", "midpoint", "rk4"}.')
    end)

    it("ODEFunc with fixed weights: solution, loss and gradients through rk4 as PyTorch", function()
        local func = ODEFunc()
        tide.no_grad(function()
            func.net[1].weight:copy_(fx({ 8, 2 }, 0.45, 0.2) * 0.5)
            func.net[1].bias:copy_(fx({ 8 }, 0.3, -0.1) * 0.1)
            func.net[3].weight:copy_(fx({ 2, 8 }, 0.61, 0.5) * 0.5)
            func.net[3].bias:copy_(fx({ 2 }, 0.8, 0.0) * 0.1)
        end)
        -- true_y0 = torch.tensor([[2., 0.]])
        local true_y0 = tide.tensor({ { 2., 0. } }, { dtype = "float32" })
        local batch_t = tide.linspace(0., 1., 4)
        local true_A = tide.tensor({ { -0.1, 2.0 }, { -2.0, -0.1 } })
        local true_y = odeint(function(_, y) return tide.mm(y ^ 3, true_A) end, true_y0, batch_t,
            { method = "rk4", options = { step_size = 0.05 } })
        assert_close_list({ 2.0, 0.0, -0.94440955, 1.7409849, -1.5557845, -1.0309929, 0.70481426,
            -1.504364 }, values(true_y), 1e-4, "true_y")
        local pred = odeint(func, true_y0, batch_t,
            { method = "rk4", options = { step_size = 0.25 } })
        assert_close_list({ 2.0, 0.0, 2.5168, -0.35991621, 3.0389197, -0.73158747, 3.5620286,
            -1.1069871 }, values(pred), 1e-5, "pred")
        -- loss = torch.mean(torch.abs(pred_y - batch_y))
        local loss = tide.mean(tide.abs(pred - true_y))
        loss:backward()
        assert_close_list({ 1.7138515 }, { loss:item() }, 1e-5, "loss")
        assert_close_list({ 0.028292067, 9.2671951e-05, 0.00023686732, -2.1992143e-08,
            0.00025989994, -2.3867919e-08, 0.17027228, -0.00027853728, 0.0026881909,
            -7.2513205e-07, -1.6742888e-05, 9.1103469e-10, -0.0030252347, 5.7176084e-07,
            -0.22661713, 0.00043602462 }, values(func.net[1].weight.grad), 1e-4, "grad W1")
        assert_close_list({ 0.24871190, 0.16613668 }, values(func.net[3].bias.grad), 1e-5,
            "grad b2")
        -- two more Adam steps after the first (PyTorch: 1.6726463, 1.6313843)
        local optimizer = optim.Adam(func:parameters(), { lr = 1e-2 })
        optimizer:step()
        local losses = {}
        for itr = 1, 2 do
            optimizer:zero_grad()
            pred = odeint(func, true_y0, batch_t,
                { method = "rk4", options = { step_size = 0.25 } })
            loss = tide.mean(tide.abs(pred - true_y))
            loss:backward()
            optimizer:step()
            losses[itr] = loss:item()
            assert_finite(losses[itr], "loss")
        end
        assert_close_list({ 1.6726463, 1.6313843 }, losses, 1e-4, "losses")
    end)

    it("ODEFunc's init is ode_demo's: normal(0, 0.1) weights, zero biases", function()
        tide.manual_seed(3)
        local func = ODEFunc()
        assert.are.equal(0, func.net[1].bias:abs():sum():item())
        assert.are.equal(0, func.net[3].bias:abs():sum():item())
        local s = func.net[1].weight:std():item()
        assert.is_true(s > 0.02 and s < 0.3)
    end)
end)
