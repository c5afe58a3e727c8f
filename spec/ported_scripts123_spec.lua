-- ported_scripts123_spec.lua — Jamie-Stirling/RetNet: src/xpos_relative_position.py
-- (fixed_pos_embedding, rotate_every_two, duplicate_interleave, apply_rotary_pos_emb, XPOS with
-- forward / forward_reverse, offset and downscale), src/retention.py (SimpleRetention's parallel
-- form with the decay mask D, its recurrent form with its state and its chunkwise form;
-- MultiScaleRetention with its gammas, swish gate and GroupNorm) and src/retnet.py (RetNet's
-- forward, forward_recurrent and forward_chunkwise), ported line for line at tiny sizes (layers
-- 1, hidden 8, ffn 16, heads 2, seq 5, batch 2). These files are the repo's real version (its
-- complex one lives apart, in src/complex/). The three forms are checked against each other as
-- src/tests.py does, and against PyTorch 1.13 for the same weights (a formula over each
-- parameter's index in named_parameters order), with 2 Adam steps.
-- The Python line stands above each Lua line that differs from it. Dims are 1-based; the
-- positions n and chunk indices i stay 0-based as in the repo (they are arithmetic, not indices).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

---------------------------------------------------------------------------------------------
-- src/xpos_relative_position.py
---------------------------------------------------------------------------------------------
-- def fixed_pos_embedding(x):
local function fixed_pos_embedding(x)
    -- seq_len, dim = x.shape
    local seq_len, dim = x:size(1), x:size(2)
    -- inv_freq = 1.0 / (10000 ** (torch.arange(0, dim) / dim))
    local inv_freq = 1.0 / (10000 ^ (tide.arange(0, dim) / dim))
    -- sinusoid_inp = (
    --     torch.einsum("i , j -> i j", torch.arange(0, seq_len, dtype=torch.float), inv_freq)
    --     .to(x))
    local sinusoid_inp = tide.einsum("i , j -> i j",
        tide.arange(0, seq_len, { dtype = tide.float }), inv_freq):to(x)
    return tide.sin(sinusoid_inp), tide.cos(sinusoid_inp)
end

-- def rotate_every_two(x):
local function rotate_every_two(x)
    -- x1 = x[:, :, ::2]
    local x1 = x[{ {}, {}, { 1, -1, 2 } }]
    -- x2 = x[:, :, 1::2]
    local x2 = x[{ {}, {}, { 2, -1, 2 } }]
    -- x = torch.stack((-x2, x1), dim=-1)
    x = tide.stack({ -x2, x1 }, -1)
    if x:size(-1) % 2 == 1 then
        -- fill last dim with zero if hidden_size is odd
        -- x2 = torch.concat((x2, torch.zeros_like(x2[:, :, :1])), dim=-1)
        x2 = tide.concat({ x2, tide.zeros_like(x2[{ {}, {}, { 1, 1 } }]) }, -1) -- luacheck: ignore
    end
    -- return x.flatten(-2)  # in einsum notation: rearrange(x, '... d j -> ... (d j)')
    return x:flatten(-2)
end

-- def duplicate_interleave(m):
local function duplicate_interleave(m)
    -- dim0 = m.shape[0]
    local dim0 = m:size(1)
    m = m:view(-1, 1) -- flatten the matrix
    -- m = m.repeat(1, 2)  # repeat all elements into the 2nd dimension
    m = m["repeat"](m, 1, 2)
    m = m:view(dim0, -1) -- reshape into a matrix, interleaving the copy
    return m
end

-- def apply_rotary_pos_emb(x, sin, cos, scale=1):
local function apply_rotary_pos_emb(x, sin, cos, scale)
    scale = scale or 1
    -- sin, cos = map(lambda t: duplicate_interleave(t * scale), (sin, cos))
    sin, cos = duplicate_interleave(sin * scale), duplicate_interleave(cos * scale)
    -- return (x * cos[:, :x.shape[-1]]) + (rotate_every_two(x) * sin)[:, :, :x.shape[-1]]
    return (x * cos[{ {}, { 1, x:size(-1) } }])
        + (rotate_every_two(x) * sin)[{ {}, {}, { 1, x:size(-1) } }]
end

-- class XPOS(nn.Module):
local XPOS = nn.Module:extend("XPOS")
-- def __init__(self, head_dim, scale_base=512):
function XPOS:init(head_dim, scale_base)
    self.head_dim = head_dim
    self.scale_base = scale_base or 512
    -- self.register_buffer(
    --     "scale", (torch.arange(0, head_dim, 2) + 0.4 * head_dim) / (1.4 * head_dim))
    self:register_buffer("scale", (tide.arange(0, head_dim, 2) + 0.4 * head_dim)
        / (1.4 * head_dim))
end

-- forward and forward_reverse differ in min_pos and the sign of sin only
local function xpos_apply(self, x, min_pos, offset, downscale, sign)
    local length = x:size(2)
    local max_pos = length + offset + min_pos
    -- scale = self.scale ** torch.arange(min_pos, max_pos, 1).to(self.scale)
    --     .div(self.scale_base)[:, None]
    local scale = self.scale ^ tide.arange(min_pos, max_pos, 1):to(self.scale)
        :div(self.scale_base)[{ {}, tide.newaxis }]
    local sin, cos = fixed_pos_embedding(scale)

    if scale:size(1) > length then
        -- scale = scale[-length:]
        scale = scale[{ { -length, -1 } }]
        sin = sin[{ { -length, -1 } }]
        cos = cos[{ { -length, -1 } }]
    end

    if downscale then
        scale = 1 / scale
    end

    -- x = apply_rotary_pos_emb(x, sin, cos, scale)   (forward_reverse: -sin)
    return apply_rotary_pos_emb(x, sign * sin, cos, scale)
end

-- def forward(self, x, offset=0, downscale=False):
function XPOS:forward(x, offset, downscale)
    -- min_pos = 0
    return xpos_apply(self, x, 0, offset or 0, downscale, 1)
end

-- def forward_reverse(self, x, offset=0, downscale=False):
function XPOS:forward_reverse(x, offset, downscale)
    offset = offset or 0
    -- min_pos = -(length + offset) // 2
    local min_pos = math.floor(-(x:size(2) + offset) / 2)
    return xpos_apply(self, x, min_pos, offset, downscale, -1)
end

---------------------------------------------------------------------------------------------
-- src/retention.py
---------------------------------------------------------------------------------------------
-- class SimpleRetention(nn.Module):
local SimpleRetention = nn.Module:extend("SimpleRetention")
-- def __init__(self, hidden_size, gamma, head_size=None, double_v_dim=False):
function SimpleRetention:init(hidden_size, gamma, head_size, double_v_dim)
    self.hidden_size = hidden_size
    if head_size == nil then
        head_size = hidden_size
    end
    self.head_size = head_size

    self.v_dim = double_v_dim and head_size * 2 or head_size
    self.gamma = gamma

    -- self.W_Q = nn.Parameter(torch.randn(hidden_size, head_size) / hidden_size)
    self.W_Q = nn.Parameter(tide.randn(hidden_size, head_size) / hidden_size)
    self.W_K = nn.Parameter(tide.randn(hidden_size, head_size) / hidden_size)
    self.W_V = nn.Parameter(tide.randn(hidden_size, self.v_dim) / hidden_size)

    self.xpos = XPOS(head_size)
end

-- def forward(self, X):  (parallel representation)
function SimpleRetention:forward(X)
    local sequence_length = X:size(2)
    -- D = self._get_D(sequence_length).to(self.W_Q.device)
    local D = self:_get_D(sequence_length):to(self.W_Q.device)

    local Q = X:matmul(self.W_Q)
    local K = X:matmul(self.W_K)

    Q = self.xpos(Q)
    -- K = self.xpos(K, downscale=True)
    K = self.xpos(K, 0, true)

    local V = X:matmul(self.W_V)
    -- ret = (Q @ K.permute(0, 2, 1)) * D.unsqueeze(0)
    local ret = Q:matmul(K:permute(1, 3, 2)) * D:unsqueeze(1)

    return ret:matmul(V)
end

-- def forward_recurrent(self, x_n, s_n_1, n):
function SimpleRetention:forward_recurrent(x_n, s_n_1, n)
    local Q = x_n:matmul(self.W_Q)
    local K = x_n:matmul(self.W_K)

    Q = self.xpos(Q, n + 1)
    -- K = self.xpos(K, n+1, downscale=True)
    K = self.xpos(K, n + 1, true)

    local V = x_n:matmul(self.W_V)

    -- s_n = self.gamma * s_n_1 + (K.transpose(-1, -2) @ V)
    local s_n = self.gamma * s_n_1 + K:transpose(-1, -2):matmul(V)

    return Q:matmul(s_n), s_n
end

-- def forward_chunkwise(self, x_i, r_i_1, i):
function SimpleRetention:forward_chunkwise(x_i, r_i_1, i)
    -- batch, chunk_size, _ = x_i.shape
    local batch, chunk_size = x_i:size(1), x_i:size(2)
    local D = self:_get_D(chunk_size)

    local Q = x_i:matmul(self.W_Q)
    local K = x_i:matmul(self.W_K)

    Q = self.xpos(Q, i * chunk_size)
    K = self.xpos(K, i * chunk_size, true)

    local V = x_i:matmul(self.W_V)

    -- r_i =(K.transpose(-1, -2) @ (V * D[-1].view(1, chunk_size, 1)))
    --     + (self.gamma ** chunk_size) * r_i_1
    local r_i = K:transpose(-1, -2):matmul(V * D[-1]:view(1, chunk_size, 1))
        + (self.gamma ^ chunk_size) * r_i_1

    -- inner_chunk = ((Q @ K.transpose(-1, -2)) * D.unsqueeze(0)) @ V
    local inner_chunk = (Q:matmul(K:transpose(-1, -2)) * D:unsqueeze(1)):matmul(V)

    --e[i,j] = gamma ** (i+1)
    local e = tide.zeros(batch, chunk_size, 1)

    -- for _i in range(chunk_size):
    for _i = 0, chunk_size - 1 do
        -- e[:, _i, :] = self.gamma ** (_i + 1)
        e[{ {}, _i + 1, {} }] = self.gamma ^ (_i + 1)
    end

    local cross_chunk = Q:matmul(r_i_1) * e

    return inner_chunk + cross_chunk, r_i
end

-- def _get_D(self, sequence_length):
function SimpleRetention:_get_D(sequence_length)
    -- n = torch.arange(sequence_length).unsqueeze(1)
    local n = tide.arange(sequence_length):unsqueeze(2)
    local m = tide.arange(sequence_length):unsqueeze(1)

    -- D = (self.gamma ** (n - m)) * (n >= m).float()
    local D = (self.gamma ^ (n - m)) * n:ge(m):float()
    -- D[D != D] = 0
    D[D:ne(D)] = 0

    return D
end

-- class MultiScaleRetention(nn.Module):
local MultiScaleRetention = nn.Module:extend("MultiScaleRetention")
-- def __init__(self, hidden_size, heads, double_v_dim=False):
function MultiScaleRetention:init(hidden_size, heads, double_v_dim)
    self.hidden_size = hidden_size
    self.v_dim = double_v_dim and hidden_size * 2 or hidden_size
    self.heads = heads
    assert(hidden_size % heads == 0, "hidden_size must be divisible by heads")
    -- self.head_size = hidden_size // heads
    self.head_size = math.floor(hidden_size / heads)
    self.head_v_dim = double_v_dim and hidden_size * 2 or hidden_size

    -- self.gammas = (1 - torch.exp(torch.linspace(math.log(1/32), math.log(1/512), heads)))
    --     .detach().cpu().tolist()
    self.gammas = (1 - tide.exp(tide.linspace(math.log(1 / 32), math.log(1 / 512), heads)))
        :detach():cpu():tolist()

    -- self.swish = lambda x: x * torch.sigmoid(x)
    self.swish = function(x) return x * tide.sigmoid(x) end
    self.W_G = nn.Parameter(tide.randn(hidden_size, self.v_dim) / hidden_size)
    self.W_O = nn.Parameter(tide.randn(self.v_dim, hidden_size) / hidden_size)
    self.group_norm = nn.GroupNorm(heads, self.v_dim)

    -- self.retentions = nn.ModuleList([
    --     SimpleRetention(self.hidden_size, gamma, self.head_size, double_v_dim)
    --     for gamma in self.gammas])
    local retentions = {}
    for _, gamma in ipairs(self.gammas) do
        retentions[#retentions + 1] = SimpleRetention(self.hidden_size, gamma, self.head_size,
            double_v_dim)
    end
    self.retentions = nn.ModuleList(retentions)
end

-- the three forms end alike
local function gate_out(self, Y, x)
    -- Y = torch.cat(Y, dim=2)
    Y = tide.cat(Y, 3)
    local Y_shape = Y.shape
    -- Y = self.group_norm(Y.reshape(-1, self.v_dim)).reshape(Y_shape)
    Y = self.group_norm(Y:reshape(-1, self.v_dim)):reshape(Y_shape)
    -- return (self.swish(X @ self.W_G) * Y) @ self.W_O
    return (self.swish(x:matmul(self.W_G)) * Y):matmul(self.W_O)
end

-- def forward(self, X):  (parallel representation)
function MultiScaleRetention:forward(X)
    -- apply each individual retention mechanism to X
    local Y = {}
    -- for i in range(self.heads):
    for i = 1, self.heads do
        -- Y.append(self.retentions[i](X))
        Y[#Y + 1] = self.retentions[i](X)
    end
    return gate_out(self, Y, X)
end

-- def forward_recurrent(self, x_n, s_n_1s, n):
function MultiScaleRetention:forward_recurrent(x_n, s_n_1s, n)
    local Y = {}
    local s_ns = {}
    for i = 1, self.heads do
        -- y, s_n = self.retentions[i].forward_recurrent(x_n[:, :, :], s_n_1s[i], n)
        local y, s_n = self.retentions[i]:forward_recurrent(x_n[{ {}, {}, {} }], s_n_1s[i], n)
        Y[#Y + 1] = y
        s_ns[#s_ns + 1] = s_n
    end
    return gate_out(self, Y, x_n), s_ns
end

-- def forward_chunkwise(self, x_i, r_i_1s, i):
function MultiScaleRetention:forward_chunkwise(x_i, r_i_1s, i)
    local Y = {}
    local r_is = {}
    -- for j in range(self.heads):
    for j = 1, self.heads do
        local y, r_i = self.retentions[j]:forward_chunkwise(x_i[{ {}, {}, {} }], r_i_1s[j], i)
        Y[#Y + 1] = y
        r_is[#r_is + 1] = r_i
    end
    return gate_out(self, Y, x_i), r_is
end

---------------------------------------------------------------------------------------------
-- src/retnet.py
---------------------------------------------------------------------------------------------
-- class RetNet(nn.Module):
local RetNet = nn.Module:extend("RetNet")
-- def __init__(self, layers, hidden_dim, ffn_size, heads, double_v_dim=False):
function RetNet:init(layers, hidden_dim, ffn_size, heads, double_v_dim)
    self.layers = layers
    self.hidden_dim = hidden_dim
    self.ffn_size = ffn_size
    self.heads = heads
    self.v_dim = double_v_dim and hidden_dim * 2 or hidden_dim

    local retentions, ffns, ln1, ln2 = {}, {}, {}, {}
    for l = 1, layers do
        retentions[l] = MultiScaleRetention(hidden_dim, heads, double_v_dim)
        -- nn.Sequential(nn.Linear(hidden_dim, ffn_size), nn.GELU(),
        --     nn.Linear(ffn_size, hidden_dim))
        ffns[l] = nn.Sequential(nn.Linear(hidden_dim, ffn_size), nn.GELU(),
            nn.Linear(ffn_size, hidden_dim))
        ln1[l] = nn.LayerNorm(hidden_dim)
        ln2[l] = nn.LayerNorm(hidden_dim)
    end
    self.retentions = nn.ModuleList(retentions)
    self.ffns = nn.ModuleList(ffns)
    self.layer_norms_1 = nn.ModuleList(ln1)
    self.layer_norms_2 = nn.ModuleList(ln2)
end

-- def forward(self, X):
function RetNet:forward(X)
    -- for i in range(self.layers):
    for i = 1, self.layers do
        -- Y = self.retentions[i](self.layer_norms_1[i](X)) + X
        local Y = self.retentions[i](self.layer_norms_1[i](X)) + X
        -- X = self.ffns[i](self.layer_norms_2[i](Y)) + Y
        X = self.ffns[i](self.layer_norms_2[i](Y)) + Y
    end
    return X
end

-- def forward_recurrent(self, x_n, s_n_1s, n):
function RetNet:forward_recurrent(x_n, s_n_1s, n)
    local s_ns = {}
    for i = 1, self.layers do
        -- o_n, s_n = self.retentions[i].forward_recurrent(self.layer_norms_1[i](x_n),
        --     s_n_1s[i], n)
        local o_n, s_n = self.retentions[i]:forward_recurrent(self.layer_norms_1[i](x_n),
            s_n_1s[i], n)
        local y_n = o_n + x_n
        s_ns[#s_ns + 1] = s_n
        x_n = self.ffns[i](self.layer_norms_2[i](y_n)) + y_n
    end
    return x_n, s_ns
end

-- def forward_chunkwise(self, x_i, r_i_1s, i):
function RetNet:forward_chunkwise(x_i, r_i_1s, i)
    local r_is = {}
    for j = 1, self.layers do
        local o_i, r_i = self.retentions[j]:forward_chunkwise(self.layer_norms_1[j](x_i),
            r_i_1s[j], i)
        local y_i = o_i + x_i
        r_is[#r_is + 1] = r_i
        x_i = self.ffns[j](self.layer_norms_2[j](y_i)) + y_i
    end
    return x_i, r_is
end

---------------------------------------------------------------------------------------------
-- the checks
---------------------------------------------------------------------------------------------
local B, L, H, FF, HEADS = 2, 5, 8, 16, 2

-- for i, (n, p) in enumerate(m.named_parameters()):
--     p.copy_((torch.sin(torch.arange(p.numel()) * 0.37 + i) * 0.2).reshape(p.shape))
local function det_init(m)
    tide.no_grad(function()
        for i, np_ in ipairs(m:named_parameters()) do
            local p = np_[2]
            p:copy_((tide.sin(tide.arange(0, p:numel()) * 0.37 + (i - 1)) * 0.2):reshape(p.shape))
        end
    end)
end

-- {sum, sum weighted by cos(0.3 k), first, last} of t, as the reference script prints them
local function summ(t)
    local f = t:detach():flatten():double()
    local w = tide.cos(tide.arange(0, f:numel()) * 0.3):double()
    return { f:sum():item(), (f * w):sum():item(), f[1]:item(), f[-1]:item() }
end

-- the largest difference of a from b, relative to b's largest entry
local function maxdiff(a, b)
    return (a - b):abs():max():item() / b:abs():max():item()
end

-- X = (torch.sin(torch.arange(B * L * H) * 0.91) * 0.5 + 0.5).reshape(B, L, H)
local function inputs()
    return (tide.sin(tide.arange(0, B * L * H) * 0.91) * 0.5 + 0.5):reshape(B, L, H)
end

-- PyTorch 1.13's values: the repo's three files run on the same det_init weights, inputs and
-- summ as above, the same calls as each test below (Adam: lr 0.01, F.mse_loss to T)
local REF = {
    xpos = { -3.759482726, -1.180840669, 1, -0.5171804428 },
    xpos_off_down = { 0.7930928748, -3.470472572, -1.126504421, -0.5456187129 },
    xrev = { -2.749355983, -1.750613538, 1.007367373, -0.4540478885 },
    xrev_off_down = { -0.7969692238, -2.230081756, 0.4083701372, -0.4385932088 },
    sr_parallel = { 0.09403380561, -0.02918284977, 8.087708011e-06, 0.001207641326 },
    msr_parallel = { -2.873438916e-06, 0.007356710637, 0.002065938199, -0.0002155492402 },
    net_parallel = { 59.85722832, -1.322209205, 0.6397485733, 0.7141754031 },
    losses = { 1.198014021, 1.14322257, 1.092937708 },
}

-- src/tests.py's loops: the recurrent form token by token, the chunkwise one chunk by chunk
-- (states: one tensor for SimpleRetention, a list per head for MultiScaleRetention)
local function three_forms(mod, X, chunk, rows, v_dim, nstate)
    local Yp = mod(X)
    local function zeros()
        -- torch.zeros(rows, v_dim).unsqueeze(0).repeat(batch_size, 1, 1)
        local s = {}
        for k = 1, nstate do s[k] = tide.zeros(rows, v_dim):unsqueeze(1):tile(X:size(1), 1, 1) end
        return s
    end
    local s, Yr = zeros(), {}
    for i = 0, X:size(2) - 1 do
        -- y_n, s_n = sr.forward_recurrent(X[:, i:i+1, :], s_n_1, i)
        local y, s_n = mod:forward_recurrent(X[{ {}, { i + 1, i + 1 }, {} }],
            nstate == 1 and s[1] or s, i)
        s = nstate == 1 and { s_n } or s_n
        Yr[#Yr + 1] = y
    end
    local r, Yc = zeros(), {}
    for i = 0, math.floor(X:size(2) / chunk) - 1 do
        -- y_i, r_i = sr.forward_chunkwise(X[:, i*chunk_size:(i+1)*chunk_size, :], r_n_1, i)
        local y, r_i = mod:forward_chunkwise(X[{ {}, { i * chunk + 1, (i + 1) * chunk }, {} }],
            nstate == 1 and r[1] or r, i)
        r = nstate == 1 and { r_i } or r_i
        Yc[#Yc + 1] = y
    end
    return Yp, tide.concat(Yr, 2), tide.concat(Yc, 2)
end

describe("ported RetNet (Jamie-Stirling/RetNet)", function()
    it("XPOS forward / forward_reverse with offset and downscale match PyTorch", function()
        -- x4 = torch.cos(torch.arange(B * L * 4) * 0.43).reshape(B, L, 4)
        local x4 = tide.cos(tide.arange(0, B * L * 4) * 0.43):reshape(B, L, 4)
        local xp = XPOS(4)
        assert.are.same({ 2 }, xp.scale.shape)
        local y = xp(x4)
        assert.are.same({ B, L, 4 }, y.shape)
        assert_close_list(REF.xpos, summ(y), 1e-5, "xpos")
        assert_close_list(REF.xpos_off_down, summ(xp(x4, 3, true)), 1e-5, "xpos offset downscale")
        assert_close_list(REF.xrev, summ(xp:forward_reverse(x4)), 1e-5, "forward_reverse")
        assert_close_list(REF.xrev_off_down, summ(xp:forward_reverse(x4, 2, true)), 1e-5,
            "forward_reverse offset downscale")
        -- relative positions: rotating q by n and k by m (downscaled) leaves only n - m, so
        -- shifting both by an offset keeps q . k
        local qk0 = xp(x4):matmul(xp(x4, 0, true):transpose(-1, -2))
        local qk3 = xp(x4, 3):matmul(xp(x4, 3, true):transpose(-1, -2))
        assert.is_true(maxdiff(qk0, qk3) < 1e-5)
    end)

    it("SimpleRetention: parallel, recurrent and chunkwise agree, and match PyTorch", function()
        -- X4 = X[:, 1:5, :]: 4 tokens, chunks of 2
        local X4 = inputs()[{ {}, { 2, 5 }, {} }]
        -- sr = SimpleRetention(H, 0.9, 4, double_v_dim=True)
        local sr = SimpleRetention(H, 0.9, 4, true)
        det_init(sr)
        assert.are.same({ 1, 1 }, { sr:_get_D(3)[{ 1, 1 }]:item(), sr:_get_D(3)[{ 3, 3 }]:item() })
        assert.are.equal(0, sr:_get_D(3)[{ 1, 3 }]:item())
        local Yp, Yr, Yc = three_forms(sr, X4, 2, 4, sr.v_dim, 1)
        assert.are.same({ B, 4, 8 }, Yp.shape)
        assert.is_true(maxdiff(Yp, Yr) < 1e-5, "recurrent " .. maxdiff(Yp, Yr))
        assert.is_true(maxdiff(Yp, Yc) < 1e-5, "chunkwise " .. maxdiff(Yp, Yc))
        assert_close_list(REF.sr_parallel, summ(Yp), 1e-7, "SimpleRetention")
        -- all 5 tokens, chunks of 1: the state decays over 4 chunks
        Yp, Yr, Yc = three_forms(sr, inputs(), 1, 4, sr.v_dim, 1)
        assert.is_true(maxdiff(Yp, Yr) < 1e-5, "recurrent " .. maxdiff(Yp, Yr))
        assert.is_true(maxdiff(Yp, Yc) < 1e-5, "chunkwise " .. maxdiff(Yp, Yc))
    end)

    it("MultiScaleRetention: gammas, the three forms agree, and match PyTorch", function()
        local X4 = inputs()[{ {}, { 2, 5 }, {} }]
        local msr = MultiScaleRetention(H, HEADS)
        det_init(msr)
        assert_close_list({ 0.96875, 0.998046875 }, msr.gammas, 1e-6, "gammas")
        local Yp, Yr, Yc = three_forms(msr, X4, 2, H / HEADS, H / HEADS, HEADS)
        assert.are.same({ B, 4, H }, Yp.shape)
        assert.is_true(maxdiff(Yp, Yr) < 1e-5, "recurrent " .. maxdiff(Yp, Yr))
        assert.is_true(maxdiff(Yp, Yc) < 1e-5, "chunkwise " .. maxdiff(Yp, Yc))
        assert_close_list(REF.msr_parallel, summ(Yp), 1e-7, "MultiScaleRetention")
        Yp, Yr, Yc = three_forms(msr, inputs(), 1, H / HEADS, H / HEADS, HEADS)
        assert.is_true(maxdiff(Yp, Yc) < 1e-5, "chunkwise " .. maxdiff(Yp, Yc))
    end)

    it("RetNet: forward, forward_recurrent, forward_chunkwise agree; 2 Adam steps", function()
        local X = inputs()
        local net = RetNet(1, H, FF, HEADS)
        det_init(net)
        assert.are.equal(18, #net:named_parameters())
        local Yp = net(X)
        local function zs()
            -- [[torch.zeros(H // HEADS, net.v_dim // HEADS).unsqueeze(0).repeat(B, 1, 1)
            --   for _ in range(HEADS)]]
            local heads = {}
            for k = 1, HEADS do
                heads[k] = tide.zeros(H / HEADS, net.v_dim / HEADS):unsqueeze(1):tile(B, 1, 1)
            end
            return { heads }
        end
        local s, r, Yr, Yc = zs(), zs(), {}, {}
        for i = 0, L - 1 do
            local x_n = X[{ {}, { i + 1, i + 1 }, {} }]
            local y
            y, s = net:forward_recurrent(x_n, s, i)
            Yr[#Yr + 1] = y
            y, r = net:forward_chunkwise(x_n, r, i)
            Yc[#Yc + 1] = y
        end
        Yr, Yc = tide.concat(Yr, 2), tide.concat(Yc, 2)
        assert.are.same({ B, L, H }, Yp.shape)
        assert.is_true(maxdiff(Yp, Yr) < 1e-5, "recurrent " .. maxdiff(Yp, Yr))
        assert.is_true(maxdiff(Yp, Yc) < 1e-5, "chunkwise " .. maxdiff(Yp, Yc))
        assert_close_list(REF.net_parallel, summ(Yp), 1e-5, "RetNet parallel")
        assert_close_list(REF.net_parallel, summ(Yr), 1e-5, "RetNet recurrent")
        assert_close_list(REF.net_parallel, summ(Yc), 1e-5, "RetNet chunkwise")

        -- T = torch.cos(torch.arange(B * L * H) * 0.53).reshape(B, L, H)
        local T = tide.cos(tide.arange(0, B * L * H) * 0.53):reshape(B, L, H)
        local opt = optim.Adam(net:parameters(), { lr = 0.01 })
        local losses = {}
        for step = 0, 2 do
            local loss = F.mse_loss(net(X), T)
            losses[#losses + 1] = loss:item()
            assert_finite(losses[#losses], "loss")
            if step < 2 then
                opt:zero_grad()
                loss:backward()
                opt:step()
            end
        end
        assert_close_list(REF.losses, losses, 1e-5, "losses")
        assert.is_true(losses[3] < losses[1])
    end)
end)
