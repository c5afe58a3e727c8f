-- ported_scripts173_spec.lua — fla-org/flash-linear-attention's pure-PyTorch reference kernels
-- (HEAD's fla/ops/*/naive.py): gla/naive.py (naive_recurrent_gla), retention/naive.py
-- (naive_retention, the parallel form with the decay mask from log2(1 - 2^(-5 - h))),
-- delta_rule/naive.py (delta_rule_recurrence, delta_rule_chunkwise) and linear_attn/naive.py
-- (naive_recurrent_linear_attn, naive_chunk_linear_attn), ported line for line at tiny sizes
-- (batch 2, heads 2, seq 8, key and value dim 4, chunk 4) in float64 on fixed inputs (sin / cos of
-- an arange). The Python line stands above each Lua line that differs from it. Values are
-- PyTorch 1.13's (the same functions in float64): each output's and final state's sum, sum of
-- squares and sum weighted by cos(1.3 i), and the gradients w.r.t. q and k of two of them; each
-- chunked form is checked against its recurrent one. Time indices are 1-based.
local tide = require("tide")
local einops = tide.einops
local unpack = table.unpack or unpack -- luacheck: ignore

local F64 = "float64"
local B, H, T, K, V, C = 2, 2, 8, 4, 4, 4

---------------------------------------------------------------------------------------------
-- 1. gla/naive.py
---------------------------------------------------------------------------------------------
-- def naive_recurrent_gla(q, k, v, gk, initial_state=None, output_final_state=False):
local function naive_recurrent_gla(q, k, v, gk, initial_state, output_final_state)
    local dtype = q.dtype
    -- q, k, v, gk = map(lambda x: x.transpose(1, 2).float(), (q, k, v, gk))
    -- (.float() left out: the check runs in float64, as the reference values do)
    q, k, v, gk = q:transpose(2, 3), k:transpose(2, 3), v:transpose(2, 3), gk:transpose(2, 3)
    -- B, H, T, K, V = *q.shape, v.shape[-1]
    local Bq, Hq, Tq, Kq = unpack(q:size())
    local Vv = v:size(-1)
    local o = tide.zeros_like(v)
    local scale = Kq ^ -0.5

    -- h = q.new_zeros(B, H, K, V, dtype=torch.float32)
    local h = q:new_zeros(Bq, Hq, Kq, Vv)
    if initial_state ~= nil then
        h = h + initial_state
    end

    -- for i in range(T):
    for i = 1, Tq do
        -- q_i = q[:, :, i] * scale
        local q_i = q[{ {}, {}, i }] * scale
        local k_i = k[{ {}, {}, i }]
        local v_i = v[{ {}, {}, i }]
        local gk_i = gk[{ {}, {}, i }]:exp()
        -- kv_i = k_i[..., None] * v_i[..., None, :]
        local kv_i = k_i:unsqueeze(-1) * v_i:unsqueeze(-2)
        -- h = h * gk_i[..., None] + kv_i
        h = h * gk_i:unsqueeze(-1) + kv_i
        -- o[:, :, i] = (q_i[..., None] * h).sum(-2)
        o[{ {}, {}, i }] = (q_i:unsqueeze(-1) * h):sum(-2)
    end

    if not output_final_state then
        h = nil
    end
    -- return o.transpose(1, 2).to(dtype), h
    return o:transpose(2, 3):to(dtype), h
end

---------------------------------------------------------------------------------------------
-- 2. retention/naive.py
---------------------------------------------------------------------------------------------
-- def naive_retention(q, k, v):
local function naive_retention(q, k, v)
    local orig_type = q.dtype
    -- _, n_heads, seq_len, d_head = q.shape
    local _, n_heads, seq_len, d_head = unpack(q:size())
    -- s = (1 - q.new_tensor(2., dtype=torch.float).pow(
    --     -5. - q.new_tensor(range(n_heads), dtype=torch.float))).log2()
    local s = (1 - q:new_tensor(2.):pow(-5. - tide.arange(0, n_heads, { dtype = F64 }))):log2()
    -- n = q.new_tensor(range(seq_len), dtype=torch.float)
    local n = tide.arange(0, seq_len, { dtype = F64 })
    -- n = torch.exp2((n.unsqueeze(-1) - n) * s.view(-1, 1, 1)) * n.unsqueeze(-1).ge(n)
    n = tide.exp2((n:unsqueeze(-1) - n) * s:view(-1, 1, 1)) * n:unsqueeze(-1):ge(n)
    -- s = torch.einsum('bhqd,bhkd,hqk->bhqk', q * d_head ** -0.5, k, n.to(q.dtype))
    s = tide.einsum("bhqd,bhkd,hqk->bhqk", q * d_head ^ -0.5, k, n:to(q.dtype))
    -- o = torch.einsum('bhqk,bhkd->bhqd', s, v)
    local o = tide.einsum("bhqk,bhkd->bhqd", s, v)
    return o:to(orig_type)
end

---------------------------------------------------------------------------------------------
-- 3. delta_rule/naive.py
---------------------------------------------------------------------------------------------
-- def delta_rule_recurrence(q, k, v, beta, initial_state=None, output_final_state=True):
local function delta_rule_recurrence(q, k, v, beta, initial_state, output_final_state)
    local orig_dtype = q.dtype
    -- b, h, l, d_k = q.shape
    local b, h, l, d_k = unpack(q:size())
    -- d_v = v.shape[-1]
    local d_v = v:size(-1)
    local o = tide.zeros_like(v)
    -- S = torch.zeros(b, h, d_k, d_v).to(v)
    local S = tide.zeros(b, h, d_k, d_v):to(v)
    -- q = q * (d_k ** -0.5)
    q = q * (d_k ^ -0.5)

    -- if beta.ndim < v.ndim:
    if beta.ndim < v.ndim then
        -- beta = beta[..., None]
        beta = beta:unsqueeze(-1)
    end

    if initial_state ~= nil then
        S = S + initial_state
    end

    -- for i in range(l):
    for i = 1, l do
        -- _k = k[:, :, i]
        local _k = k[{ {}, {}, i }]
        local _q = q[{ {}, {}, i }]
        -- _v = v[:, :, i].clone()
        local _v = v[{ {}, {}, i }]:clone()
        local beta_i = beta[{ {}, {}, i }]
        -- _v = _v - (S.clone() * _k[..., None]).sum(-2)
        _v = _v - (S:clone() * _k:unsqueeze(-1)):sum(-2)
        _v = _v * beta_i
        -- S = S.clone() + _k.unsqueeze(-1) * _v.unsqueeze(-2)
        S = S:clone() + _k:unsqueeze(-1) * _v:unsqueeze(-2)
        -- o[:, :, i] = torch.einsum('bhd,bhdm->bhm', _q, S)
        o[{ {}, {}, i }] = tide.einsum("bhd,bhdm->bhm", _q, S)
    end
    -- S = None if output_final_state is False else S
    if output_final_state == false then S = nil end
    return o:to(orig_dtype), S
end

-- def delta_rule_chunkwise(q, k, v, beta, chunk_size=32):
local function delta_rule_chunkwise(q, k, v, beta, chunk_size)
    chunk_size = chunk_size or 32
    -- b, h, l, d_k = q.shape
    local b, h, l, d_k = unpack(q:size())
    local d_v = v:size(-1)
    q = q * (d_k ^ -0.5)
    -- v = v * beta[..., None]
    v = v * beta:unsqueeze(-1)
    local k_beta = k * beta:unsqueeze(-1)

    -- assert l % chunk_size == 0
    assert(l % chunk_size == 0)

    -- compute (I - tri(diag(beta) KK^T))^{-1}
    -- mask = torch.triu(torch.ones(chunk_size, chunk_size, dtype=torch.bool, device=q.device),
    --     diagonal=0)
    local mask = tide.triu(tide.ones(chunk_size, chunk_size, { dtype = "bool" }), 0)
    -- q, k, v, k_beta = map(lambda x: rearrange(x, 'b h (n c) d -> b h n c d', c=chunk_size),
    --     [q, k, v, k_beta])
    local function r(x)
        return einops.rearrange(x, "b h (n c) d -> b h n c d", { c = chunk_size })
    end
    q, k, v, k_beta = r(q), r(k), r(v), r(k_beta)
    -- attn = -(k_beta @ k.transpose(-1, -2)).masked_fill(mask, 0)
    local attn = -(k_beta:matmul(k:transpose(-1, -2))):masked_fill(mask, 0)
    -- for i in range(1, chunk_size):
    for i = 1, chunk_size - 1 do
        -- attn[..., i, :i] = attn[..., i, :i] +
        --     (attn[..., i, :, None].clone() * attn[..., :, :i].clone()).sum(-2)
        attn[{ "...", i + 1, { 1, i } }] = attn[{ "...", i + 1, { 1, i } }]
            + (attn[{ "...", i + 1, {} }]:unsqueeze(-1):clone()
                * attn[{ "...", {}, { 1, i } }]:clone()):sum(-2)
    end
    -- attn = attn + torch.eye(chunk_size, dtype=torch.float, device=q.device)
    attn = attn + tide.eye(chunk_size, { dtype = q.dtype })

    -- u = attn @ v
    local u = attn:matmul(v)
    local w = attn:matmul(k_beta)
    -- S = k.new_zeros(b, h, d_k, d_v)
    local S = k:new_zeros(b, h, d_k, d_v)
    local o = tide.zeros_like(v)
    -- mask = torch.triu(torch.ones(chunk_size, chunk_size, dtype=torch.bool, ...), diagonal=1)
    mask = tide.triu(tide.ones(chunk_size, chunk_size, { dtype = "bool" }), 1)
    -- for i in range(0, l // chunk_size):
    for i = 1, math.floor(l / chunk_size) do
        -- q_i, k_i = q[:, :, i], k[:, :, i]
        local q_i, k_i = q[{ {}, {}, i }], k[{ {}, {}, i }]
        -- attn = (q_i @ k_i.transpose(-1, -2)).masked_fill_(mask, 0)
        attn = q_i:matmul(k_i:transpose(-1, -2)):masked_fill_(mask, 0)
        -- u_i = u[:, :, i] - w[:, :, i] @ S
        local u_i = u[{ {}, {}, i }] - w[{ {}, {}, i }]:matmul(S)
        -- o_inter = q_i @ S
        local o_inter = q_i:matmul(S)
        -- o[:, :, i] = o_inter + attn @ u_i
        o[{ {}, {}, i }] = o_inter + attn:matmul(u_i)
        -- S = S + k_i.transpose(-1, -2) @ u_i
        S = S + k_i:transpose(-1, -2):matmul(u_i)
    end

    -- return rearrange(o, 'b h n c d -> b h (n c) d'), S
    return einops.rearrange(o, "b h n c d -> b h (n c) d"), S
end

---------------------------------------------------------------------------------------------
-- 4. linear_attn/naive.py
---------------------------------------------------------------------------------------------
-- def naive_recurrent_linear_attn(q, k, v, scale=None, initial_state=None,
--     output_final_state=False, normalize=False):
local function naive_recurrent_linear_attn(q, k, v, scale, initial_state, output_final_state,
                                           normalize)
    local dtype = q.dtype
    if scale == nil then
        -- scale = q.shape[-1] ** -0.5
        scale = q:size(-1) ^ -0.5
    end
    -- B, T, H, K, V = *q.shape, v.shape[-1]
    local Bq, Tq, Hq, Kq = unpack(q:size())
    local Vv = v:size(-1)
    local kv_init, z_init
    -- if normalize and isinstance(initial_state, tuple):
    if normalize and type(initial_state) == "table" and not tide.is_tensor(initial_state) then
        kv_init, z_init = initial_state[1], initial_state[2]
    else
        kv_init, z_init = initial_state, nil
    end
    -- q, k, v = map(lambda x: x.to(torch.float32), (q, k, v))
    -- (left as they are: the check runs in float64)
    local o = tide.empty_like(v)

    -- S = torch.zeros((B, H, K, V), device=q.device, dtype=torch.float32)
    local S = tide.zeros({ Bq, Hq, Kq, Vv }, { dtype = q.dtype })
    if kv_init ~= nil then
        S = S + kv_init
    end
    -- for t in range(T):
    for t = 1, Tq do
        -- S = S + torch.einsum('b h k, b h v -> b h k v', k[:, t], v[:, t])
        S = S + einops.einsum(k[{ {}, t }], v[{ {}, t }], "b h k, b h v -> b h k v")
        -- o[:, t] = torch.einsum('b h k v, b h k -> b h v', S, q[:, t] * scale)
        o[{ {}, t }] = einops.einsum(S, q[{ {}, t }] * scale, "b h k v, b h k -> b h v")
    end
    if normalize then
        -- k_cum = k.cumsum(1) if z_init is None else k.cumsum(1) + z_init
        local k_cum = z_init == nil and k:cumsum(2) or k:cumsum(2) + z_init
        -- o = o / ((q * scale * k_cum).sum(-1, keepdim=True) + 1e-10)
        o = o / ((q * scale * k_cum):sum(-1, { keepdim = true }) + 1e-10)
        if output_final_state then
            -- return o.to(dtype), (S, k_cum[:, -1:])
            return o:to(dtype), { S, k_cum[{ {}, { -1, -1 } }] }
        end
        return o:to(dtype), nil
    end
    -- return o.to(dtype), S if output_final_state else None
    return o:to(dtype), output_final_state and S or nil
end

-- def naive_chunk_linear_attn(q, k, v, scale=None, normalize=False):
local function naive_chunk_linear_attn(q, k, v, scale, normalize)
    if scale == nil then
        scale = q:size(-1) ^ -0.5
    end
    -- chunk_size = 64
    -- (4 here: seq 8 is two chunks; the port's only change)
    local chunk_size = C
    -- q = rearrange(q, 'b (n c) h d -> b h n c d', c=chunk_size) * scale
    q = einops.rearrange(q, "b (n c) h d -> b h n c d", { c = chunk_size }) * scale
    k = einops.rearrange(k, "b (n c) h d -> b h n c d", { c = chunk_size })
    v = einops.rearrange(v, "b (n c) h d -> b h n c d", { c = chunk_size })
    -- kv = k.transpose(-1, -2) @ v
    local kv = k:transpose(-1, -2):matmul(v)
    -- kv = kv.cumsum(2)
    kv = kv:cumsum(3)
    -- kv = torch.cat([torch.zeros_like(kv[:, :, :1]), kv[:, :, :-1]], dim=2)
    kv = tide.cat({ tide.zeros_like(kv[{ {}, {}, { 1, 1 } }]), kv[{ {}, {}, { 1, -2 } }] }, 3)
    -- inter = q @ kv
    local inter = q:matmul(kv)
    -- intra = ((q @ k.transpose(-1, -2)).masked_fill_(
    --     torch.triu(torch.ones(chunk_size, chunk_size, dtype=bool, device=q.device), diagonal=1),
    --     0,
    -- )) @ v
    local intra = (q:matmul(k:transpose(-1, -2)):masked_fill_(
        tide.triu(tide.ones(chunk_size, chunk_size, { dtype = "bool" }), 1),
        0
    )):matmul(v)
    local o = inter + intra
    o = einops.rearrange(o, "b h n c d -> b (n c) h d")
    if normalize then
        q = einops.rearrange(q, "b h n c d -> b (n c) h d")
        k = einops.rearrange(k, "b h n c d -> b (n c) h d")
        -- k_cum = k.cumsum(1)
        local k_cum = k:cumsum(2)
        -- o = o / ((q * k_cum).sum(-1, keepdim=True) + 1e-10)
        o = o / ((q * k_cum):sum(-1, { keepdim = true }) + 1e-10)
    end
    return o
end

---------------------------------------------------------------------------------------------
-- the checks
---------------------------------------------------------------------------------------------
local N = B * H * T * K
-- fixed inputs, [B, H, T, D]; bthd: transposed to [B, T, H, D] (gla, linear_attn)
local function inputs(bthd)
    local ar = tide.arange(0, N, { dtype = F64 })
    local q = (ar * 0.37):sin():reshape(B, H, T, K)
    local k = (ar * 0.23):cos():reshape(B, H, T, K)
    local v = (ar * 0.11 + 0.5):sin():reshape(B, H, T, V)
    local g = (-0.1 - 0.05 * (1 + (ar * 0.7):cos())):reshape(B, H, T, K)
    local beta = (tide.arange(0, B * H * T, { dtype = F64 }) * 0.9):sin():sigmoid()
        :reshape(B, H, T)
    if bthd then
        q, k, v, g = q:transpose(2, 3):contiguous(), k:transpose(2, 3):contiguous(),
            v:transpose(2, 3):contiguous(), g:transpose(2, 3):contiguous()
    end
    return q, k, v, g, beta
end

-- sum, sum of squares, sum weighted by cos(1.3 i) over the flat index i (0-based)
local function assert_stats(want, x, what)
    local w = (tide.arange(0, x:numel(), { dtype = F64 }) * 1.3):cos():reshape(x:size())
    local got = { x:sum():item(), (x * x):sum():item(), (x * w):sum():item() }
    for i = 1, 3 do
        local tol = 1e-9 * math.max(1, math.abs(want[i]))
        assert(math.abs(got[i] - want[i]) <= tol,
            ("%s stat %d: want %.15g, got %.15g"):format(what, i, want[i], got[i]))
    end
end

local function max_abs_diff(a, b) return (a - b):abs():max():item() end

describe("fla-org/flash-linear-attention naive.py references", function()
    it("gla: naive_recurrent_gla's output, final state and q / k gradients", function()
        local q, k, v, g = inputs(true)
        q:requires_grad_(); k:requires_grad_()
        local o, h = naive_recurrent_gla(q, k, v, g, nil, true)
        assert.are.same({ B, T, H, V }, o:size())
        assert.are.same({ B, H, K, V }, h:size())
        assert_stats({ -14.2954640417039, 216.723712388108, -2.57703975022292 }, o, "gla o")
        assert_stats({ -22.1702878941393, 81.1498370964714, -7.70163262111057 }, h, "gla h")
        -- ((o*o).sum() + h.sum()).backward()
        local loss = (o * o):sum() + h:sum()
        loss:backward()
        assert_stats({ 62.6584409641867, 5153.08403679187, 0.351126719128185 }, q.grad, "gla dq")
        assert_stats({ -605.065307042989, 8988.99644843071, 20.5412032368222 }, k.grad, "gla dk")
        -- no final state unless asked
        local _, h2 = naive_recurrent_gla(q, k, v, g)
        assert.is_nil(h2)
    end)

    it("retention: naive_retention's decay-masked parallel form", function()
        local q, k, v = inputs(false)
        local o = naive_retention(q, k, v)
        assert.are.same({ B, H, T, V }, o:size())
        assert_stats({ -16.0950950148778, 342.891508101624, 12.183744711383 }, o, "ret o")
    end)

    it("delta_rule: recurrence's output, state and gradients; chunkwise agrees", function()
        local q, k, v, _, beta = inputs(false)
        q:requires_grad_(); k:requires_grad_()
        local o, S = delta_rule_recurrence(q, k, v, beta)
        assert_stats({ 1.44844795599753, 19.9468907981776, 0.303199927654513 }, o, "delta o")
        assert_stats({ 4.12007322937057, 14.2854115081526, -2.8668462562191 }, S, "delta S")
        local loss = (o * o):sum() + S:sum()
        loss:backward()
        assert_stats({ -1.41289059749062, 74.4278145360721, 1.89370413044883 }, q.grad,
            "delta dq")
        assert_stats({ 1.14361554696783, 505.637681167248, -16.0598464078687 }, k.grad,
            "delta dk")
        local o2, S2 = delta_rule_chunkwise(q, k, v, beta, C)
        assert.are.same({ B, H, T, V }, o2:size())
        assert.is_true(max_abs_diff(o2, o) < 1e-12)
        assert.is_true(max_abs_diff(S2, S) < 1e-12)
    end)

    it("linear_attn: recurrent and chunked forms agree; normalize", function()
        local q, k, v = inputs(true)
        local o, S = naive_recurrent_linear_attn(q, k, v, nil, nil, true)
        assert_stats({ -16.8435303239661, 383.060332853543, -1.37388829608938 }, o, "lin o")
        assert_stats({ -23.9024416420648, 160.076382297824, -8.53884838647746 }, S, "lin S")
        local o2 = naive_chunk_linear_attn(q, k, v)
        assert.are.same({ B, T, H, V }, o2:size())
        assert.is_true(max_abs_diff(o2, o) < 1e-12)
        local o3 = naive_chunk_linear_attn(q, k, v, nil, true)
        assert_stats({ -263.87207725666, 24729.6047439002, 39.568058183907 }, o3, "lin onorm")
        -- the recurrent form's normalize divides by the same q . cumsum(k)
        local o4, st = naive_recurrent_linear_attn(q, k, v, nil, nil, true, true)
        assert.is_true(max_abs_diff(o4, o3) < 1e-9)
        assert.are.same({ B, 1, H, K }, st[2]:size())
    end)
end)
