-- ported_scripts41_spec.lua — labmlai/annotated_deep_learning_paper_implementations ported line
-- for line: capsule_networks (Squash, Router, MarginLoss, MNISTCapsuleNetworkModel),
-- transformers/rope (RotaryPositionalEmbeddings, RotaryPEMultiHeadAttention), transformers/alibi
-- (get_slopes, get_alibi_biases, AlibiMultiHeadAttention) with transformers/mha.py, lstm
-- (LSTMCell, LSTM) and hypernetworks/hyper_lstm.py. labml_helpers' Module is nn.Module; the labml
-- experiment/config scaffolding is dropped and each module runs on tiny random data (shapes,
-- values checked against PyTorch 1.13, a few optimizer steps). The Python line stands above each
-- Lua line that differs from it. Dims, indices and class targets are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

local function close(expected, t, tol)
    local got = t:flatten():totable()
    assert.are.equal(#expected, #got)
    for i = 1, #expected do
        assert.is_true(math.abs(expected[i] - got[i]) <= (tol or 1e-5),
            ("element %d: expected %.7g, got %.7g"):format(i, expected[i], got[i]))
    end
end

-- Python's math.log2 (Lua 5.1 has no base argument to math.log)
local function log2(x) return math.log(x) / math.log(2) end

---------------------------------------------------------------------------------------------
-- labml_nn/transformers/mha.py (used by rope and alibi)
---------------------------------------------------------------------------------------------
-- class PrepareForMultiHeadAttention(nn.Module):
local PrepareForMultiHeadAttention = nn.Module:extend("PrepareForMultiHeadAttention")
function PrepareForMultiHeadAttention:init(d_model, heads, d_k, bias)
    -- self.linear = nn.Linear(d_model, heads * d_k, bias=bias)
    self.linear = nn.Linear(d_model, heads * d_k, { bias = bias })
    self.heads = heads
    self.d_k = d_k
end

function PrepareForMultiHeadAttention:forward(x)
    -- head_shape = x.shape[:-1]
    local head_shape = x.shape[{ { 1, -2 } }]
    x = self.linear(x)
    -- x = x.view(*head_shape, self.heads, self.d_k)
    x = x:view(head_shape + { self.heads, self.d_k })
    return x
end

-- class MultiHeadAttention(nn.Module):
local MultiHeadAttention = nn.Module:extend("MultiHeadAttention")
-- def __init__(self, heads: int, d_model: int, dropout_prob: float = 0.1, bias: bool = True):
function MultiHeadAttention:init(heads, d_model, dropout_prob, bias)
    if dropout_prob == nil then dropout_prob = 0.1 end
    if bias == nil then bias = true end
    -- self.d_k = d_model // heads
    self.d_k = math.floor(d_model / heads)
    self.heads = heads
    self.query = PrepareForMultiHeadAttention(d_model, heads, self.d_k, bias)
    self.key = PrepareForMultiHeadAttention(d_model, heads, self.d_k, bias)
    self.value = PrepareForMultiHeadAttention(d_model, heads, self.d_k, true)
    -- self.softmax = nn.Softmax(dim=1)
    self.softmax = nn.Softmax({ dim = 2 })
    self.output = nn.Linear(d_model, d_model)
    self.dropout = nn.Dropout(dropout_prob)
    self.scale = 1 / math.sqrt(self.d_k)
    self.attn = nil
end

function MultiHeadAttention:get_scores(query, key)
    return tide.einsum('ibhd,jbhd->ijbh', query, key)
end

function MultiHeadAttention:prepare_mask(mask, query_shape, key_shape)
    -- assert mask.shape[0] == 1 or mask.shape[0] == query_shape[0]
    assert(mask.shape[1] == 1 or mask.shape[1] == query_shape[1])
    assert(mask.shape[2] == key_shape[1])
    assert(mask.shape[3] == 1 or mask.shape[3] == query_shape[2])
    -- mask = mask.unsqueeze(-1)
    mask = mask:unsqueeze(-1)
    return mask
end

-- def forward(self, *, query, key, value, mask=None):
function MultiHeadAttention:forward(args)
    local query, key, value, mask = args.query, args.key, args.value, args.mask
    -- seq_len, batch_size, _ = query.shape
    local seq_len, batch_size = query.shape[1], query.shape[2]
    if mask ~= nil then
        mask = self:prepare_mask(mask, query.shape, key.shape)
    end
    query = self.query(query)
    key = self.key(key)
    value = self.value(value)
    local scores = self:get_scores(query, key)
    -- scores *= self.scale
    scores = scores * self.scale
    if mask ~= nil then
        -- scores = scores.masked_fill(mask == 0, float('-inf'))
        scores = scores:masked_fill(mask:eq(0), -math.huge)
    end
    local attn = self.softmax(scores)
    attn = self.dropout(attn)
    local x = tide.einsum("ijbh,jbhd->ibhd", attn, value)
    self.attn = attn:detach()
    x = x:reshape(seq_len, batch_size, -1)
    return self.output(x)
end

-- labml_nn/transformers/utils.py
local function subsequent_mask(seq_len)
    -- mask = torch.tril(torch.ones(seq_len, seq_len)).to(torch.bool).unsqueeze(-1)
    local mask = tide.tril(tide.ones(seq_len, seq_len)):to(tide.bool):unsqueeze(-1)
    return mask
end

---------------------------------------------------------------------------------------------
-- 1. capsule_networks/__init__.py and capsule_networks/mnist.py
---------------------------------------------------------------------------------------------
describe("labml_nn capsule_networks", function()
    -- class Squash(nn.Module):
    local Squash = nn.Module:extend("Squash")
    function Squash:init(epsilon)
        self.epsilon = epsilon or 1e-8
    end

    function Squash:forward(s)
        -- s2 = (s ** 2).sum(dim=-1, keepdims=True)
        local s2 = (s ^ 2):sum({ dim = -1, keepdims = true })
        -- return (s2 / (1 + s2)) * (s / torch.sqrt(s2 + self.epsilon))
        return (s2 / (1 + s2)) * (s / tide.sqrt(s2 + self.epsilon))
    end

    -- class Router(nn.Module):
    local Router = nn.Module:extend("Router")
    function Router:init(in_caps, out_caps, in_d, out_d, iterations)
        self.in_caps = in_caps
        self.out_caps = out_caps
        self.iterations = iterations
        -- self.softmax = nn.Softmax(dim=1)
        self.softmax = nn.Softmax({ dim = 2 })
        self.squash = Squash()
        -- self.weight = nn.Parameter(torch.randn(in_caps, out_caps, in_d, out_d), requires_grad=True)
        self.weight = nn.Parameter(tide.randn(in_caps, out_caps, in_d, out_d), { requires_grad = true })
    end

    function Router:forward(u)
        local u_hat = tide.einsum('ijnm,bin->bijm', self.weight, u)
        -- b = u.new_zeros(u.shape[0], self.in_caps, self.out_caps)
        local b = u:new_zeros(u.shape[1], self.in_caps, self.out_caps)
        local v = nil
        -- for i in range(self.iterations):
        for _ = 1, self.iterations do
            local c = self.softmax(b)
            local s = tide.einsum('bij,bijm->bjm', c, u_hat)
            v = self.squash(s)
            local a = tide.einsum('bjm,bijm->bij', v, u_hat)
            b = b + a
        end
        return v
    end

    -- class MarginLoss(nn.Module):
    local MarginLoss = nn.Module:extend("MarginLoss")
    -- def __init__(self, *, n_labels, lambda_=0.5, m_positive=0.9, m_negative=0.1):
    function MarginLoss:init(args)
        self.m_negative = args.m_negative or 0.1
        self.m_positive = args.m_positive or 0.9
        self.lambda_ = args.lambda_ or 0.5
        self.n_labels = args.n_labels
    end

    function MarginLoss:forward(v, labels)
        -- v_norm = torch.sqrt((v ** 2).sum(dim=-1))
        local v_norm = tide.sqrt((v ^ 2):sum({ dim = -1 }))
        -- labels = torch.eye(self.n_labels, device=labels.device)[labels]
        labels = tide.eye(self.n_labels, { device = labels.device })[labels]
        -- loss = labels * F.relu(self.m_positive - v_norm) + \
        --        self.lambda_ * (1.0 - labels) * F.relu(v_norm - self.m_negative)
        local loss = labels * F.relu(self.m_positive - v_norm) +
            self.lambda_ * (1.0 - labels) * F.relu(v_norm - self.m_negative)
        return loss:sum({ dim = -1 }):mean()
    end

    it("Squash matches PyTorch; Router routes; MarginLoss on eye(n)[labels]", function()
        local squash = Squash()
        close({ 0.5769230723381042, 0.7692307829856873, 0.12000000476837158, 0.1600000113248825 },
            squash(tide.tensor({ { { 3., 4. }, { 0.3, 0.4 } } })))
        tide.manual_seed(0)
        local router = Router(6, 3, 4, 5, 3)
        local u = tide.randn(2, 6, 4)
        local v = router(u)
        assert.are.same({ 2, 3, 5 }, v.shape)
        -- every output capsule's length is < 1
        assert.is_true(tide.sqrt((v ^ 2):sum(-1)):lt(1):all():item())
        -- margin_loss = MarginLoss(n_labels=10)
        local margin_loss = MarginLoss({ n_labels = 3 })
        local loss = margin_loss(v, tide.tensor({ 1, 3 }))
        assert_finite(loss)
        loss:backward()
        assert.is_true(router.weight.grad:abs():sum():item() > 0)
    end)

    it("MNISTCapsuleNetworkModel forward and a few Adam steps (channels shrunk)", function()
        tide.manual_seed(1)
        -- class MNISTCapsuleNetworkModel(nn.Module):  (256 channels shrunk to 16 and 4 * 8)
        local C1, P = 16, 4
        local MNISTCapsuleNetworkModel = nn.Module:extend("MNISTCapsuleNetworkModel")
        function MNISTCapsuleNetworkModel:init()
            -- self.conv1 = nn.Conv2d(in_channels=1, out_channels=256, kernel_size=9, stride=1)
            self.conv1 = nn.Conv2d({ in_channels = 1, out_channels = C1, kernel_size = 9, stride = 1 })
            -- self.conv2 = nn.Conv2d(in_channels=256, out_channels=32 * 8, kernel_size=9, stride=2, padding=0)
            self.conv2 = nn.Conv2d({ in_channels = C1, out_channels = P * 8, kernel_size = 9, stride = 2, padding = 0 })
            self.squash = Squash()
            -- self.digit_capsules = Router(32 * 6 * 6, 10, 8, 16, 3)
            self.digit_capsules = Router(P * 6 * 6, 10, 8, 16, 3)
            self.decoder = nn.Sequential(
                nn.Linear(16 * 10, 512),
                nn.ReLU(),
                nn.Linear(512, 1024),
                nn.ReLU(),
                nn.Linear(1024, 784),
                nn.Sigmoid()
            )
        end

        function MNISTCapsuleNetworkModel:forward(data)
            local x = F.relu(self.conv1(data))
            x = self.conv2(x)
            -- caps = x.view(x.shape[0], 8, 32 * 6 * 6).permute(0, 2, 1)
            local caps = x:view(x.shape[1], 8, P * 6 * 6):permute(1, 3, 2)
            caps = self.squash(caps)
            caps = self.digit_capsules(caps)
            local pred, mask
            -- with torch.no_grad():
            tide.no_grad(function()
                -- pred = (caps ** 2).sum(-1).argmax(-1)
                pred = (caps ^ 2):sum(-1):argmax(-1)
                -- mask = torch.eye(10, device=data.device)[pred]
                mask = tide.eye(10, { device = data.device })[pred]
            end)
            -- reconstructions = self.decoder((caps * mask[:, :, None]).view(x.shape[0], -1))
            local reconstructions = self.decoder((caps * mask[{ {}, {}, tide.newaxis }]):view(x.shape[1], -1))
            reconstructions = reconstructions:view(-1, 1, 28, 28)
            return caps, reconstructions, pred
        end

        local model = MNISTCapsuleNetworkModel()
        -- reconstruction_loss = nn.MSELoss(); margin_loss = MarginLoss(n_labels=10)
        local reconstruction_loss = nn.MSELoss()
        local margin_loss = MarginLoss({ n_labels = 10 })
        local optimizer = optim.Adam(model:parameters(), { lr = 1e-3 })
        local data, target = tide.rand(4, 1, 28, 28), tide.randint(1, 11, { 4 })
        local losses = {}
        for _ = 1, 4 do
            model:train(true)
            local caps, reconstructions, pred = model(data)
            assert.are.same({ 4, 10, 16 }, caps.shape)
            assert.are.same({ 4, 1, 28, 28 }, reconstructions.shape)
            assert.are.same({ 4 }, pred.shape)
            -- loss = self.margin_loss(caps, target) + 0.0005 * self.reconstruction_loss(reconstructions, data)
            local loss = margin_loss(caps, target) + 0.0005 * reconstruction_loss(reconstructions, data)
            loss:backward()
            optimizer:step()
            optimizer:zero_grad()
            losses[#losses + 1] = loss:item()
        end
        assert.is_true(losses[#losses] < losses[1])
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. transformers/rope/__init__.py
---------------------------------------------------------------------------------------------
-- class RotaryPositionalEmbeddings(nn.Module):
local RotaryPositionalEmbeddings = nn.Module:extend("RotaryPositionalEmbeddings")
-- def __init__(self, d: int, base: int = 10_000):
function RotaryPositionalEmbeddings:init(d, base)
    self.base = base or 10000
    self.d = d
    self.cos_cached = nil
    self.sin_cached = nil
end

function RotaryPositionalEmbeddings:_build_cache(x)
    -- if self.cos_cached is not None and x.shape[0] <= self.cos_cached.shape[0]:
    if self.cos_cached ~= nil and x.shape[1] <= self.cos_cached.shape[1] then
        return
    end
    local seq_len = x.shape[1]
    -- theta = 1. / (self.base ** (torch.arange(0, self.d, 2).float() / self.d)).to(x.device)
    local theta = 1. / (self.base ^ (tide.arange(0, self.d, 2):float() / self.d)):to(x.device)
    -- seq_idx = torch.arange(seq_len, device=x.device).float().to(x.device)
    local seq_idx = tide.arange(seq_len, { device = x.device }):float():to(x.device)
    local idx_theta = tide.einsum('n,d->nd', seq_idx, theta)
    -- idx_theta2 = torch.cat([idx_theta, idx_theta], dim=1)
    local idx_theta2 = tide.cat({ idx_theta, idx_theta }, { dim = 2 })
    -- self.cos_cached = idx_theta2.cos()[:, None, None, :]
    self.cos_cached = idx_theta2:cos()[{ {}, tide.newaxis, tide.newaxis, {} }]
    self.sin_cached = idx_theta2:sin()[{ {}, tide.newaxis, tide.newaxis, {} }]
end

function RotaryPositionalEmbeddings:_neg_half(x)
    -- d_2 = self.d // 2
    local d_2 = math.floor(self.d / 2)
    -- return torch.cat([-x[:, :, :, d_2:], x[:, :, :, :d_2]], dim=-1)
    return tide.cat({ -x[{ {}, {}, {}, { d_2 + 1, -1 } }], x[{ {}, {}, {}, { 1, d_2 } }] }, { dim = -1 })
end

function RotaryPositionalEmbeddings:forward(x)
    self:_build_cache(x)
    local seq_len = x.shape[1]
    -- x_rope, x_pass = x[..., :self.d], x[..., self.d:]
    local x_rope, x_pass = x[{ "...", { 1, self.d } }], x[{ "...", { self.d + 1, -1 } }]
    local neg_half_x = self:_neg_half(x_rope)
    -- x_rope = (x_rope * self.cos_cached[:seq_len]) + (neg_half_x * self.sin_cached[:seq_len])
    x_rope = (x_rope * self.cos_cached[{ { 1, seq_len } }]) + (neg_half_x * self.sin_cached[{ { 1, seq_len } }])
    -- return torch.cat((x_rope, x_pass), dim=-1)
    return tide.cat({ x_rope, x_pass }, { dim = -1 })
end

-- class RotaryPEMultiHeadAttention(MultiHeadAttention):
local RotaryPEMultiHeadAttention = MultiHeadAttention:extend("RotaryPEMultiHeadAttention")
function RotaryPEMultiHeadAttention:init(heads, d_model, rope_percentage, dropout_prob)
    -- super().__init__(heads, d_model, dropout_prob)
    MultiHeadAttention.init(self, heads, d_model, dropout_prob or 0.0)
    -- d_rope = int(self.d_k * rope_percentage)
    local d_rope = math.floor(self.d_k * (rope_percentage or 0.5))
    self.query_rotary_pe = RotaryPositionalEmbeddings(d_rope)
    self.key_rotary_pe = RotaryPositionalEmbeddings(d_rope)
end

function RotaryPEMultiHeadAttention:get_scores(query, key)
    return tide.einsum('ibhd,jbhd->ijbh', self.query_rotary_pe(query), self.key_rotary_pe(key))
end

describe("labml_nn transformers/rope", function()
    it("_test_rotary: RotaryPositionalEmbeddings(4) on [[1..4],[4..7],[7..10]] matches PyTorch", function()
        -- x = torch.tensor([[1, 2, 3, 4], [4, 5, 6, 7], [7, 8, 9, 10]], dtype=torch.float)
        local x = tide.tensor({ { 1, 2, 3, 4 }, { 4, 5, 6, 7 }, { 7, 8, 9, 10 } }, { dtype = tide.float })
        -- x = x[:, None, None, :]
        x = x[{ {}, tide.newaxis, tide.newaxis, {} }]
        local rotary_pe = RotaryPositionalEmbeddings(4)
        local y = rotary_pe(x)
        assert.are.same({ 3, 1, 1, 4 }, y.shape)
        close({ 1.0, 2.0, 3.0, 4.0, -2.8876163959503174, 4.929751396179199, 6.6076979637146,
            7.049649238586426, -11.096704483032227, 7.7984137535095215, 2.619760274887085,
            10.157989501953125 }, y, 1e-4)
        -- the partial rotation: only the first d=2 features rotate, x[..., 2:] passes through
        close({ 1.0, 2.0, 3.0, 4.0, -2.04614520072937, 6.067395210266113, 6.0, 7.0,
            -10.187407493591309, 3.035907030105591, 9.0, 10.0 }, RotaryPositionalEmbeddings(2)(x), 1e-4)
        -- the cache is reused for a shorter sequence
        local cached = rotary_pe.cos_cached
        rotary_pe(x[{ { 1, 2 } }])
        assert.are.equal(cached, rotary_pe.cos_cached)
    end)

    it("RotaryPEMultiHeadAttention with subsequent_mask trains", function()
        tide.manual_seed(2)
        local mha = RotaryPEMultiHeadAttention(2, 8, 0.5)
        local opt = optim.SGD(mha:parameters(), { lr = 0.1 })
        local x = tide.randn(5, 3, 8)
        -- mask = subsequent_mask(seq_len)  [seq, seq, 1]
        local mask = subsequent_mask(5)
        local first, last
        for _ = 1, 5 do
            local out = mha({ query = x, key = x, value = x, mask = mask })
            assert.are.same({ 5, 3, 8 }, out.shape)
            local loss = (out ^ 2):mean()
            opt:zero_grad(); loss:backward(); opt:step()
            first = first or loss:item(); last = loss:item()
        end
        assert.is_true(last < first)
        -- causal: the first query attends only to the first key
        close({ 1, 0, 0, 0, 0 }, mha.attn[{ 1, {}, 1, 1 }])
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. transformers/alibi/__init__.py
---------------------------------------------------------------------------------------------
local function get_slopes(n_heads)
    -- n = 2 ** math.floor(math.log2(n_heads))
    local n = 2 ^ math.floor(log2(n_heads))
    local m_0 = 2.0 ^ (-8.0 / n)
    -- m = torch.pow(m_0, torch.arange(1, 1 + n))
    local m = tide.pow(m_0, tide.arange(1, 1 + n))
    if n < n_heads then
        local m_hat_0 = 2.0 ^ (-4.0 / n)
        local m_hat = tide.pow(m_hat_0, tide.arange(1, 1 + 2 * (n_heads - n), 2))
        m = tide.cat({ m, m_hat })
    end
    return m
end

-- @torch.no_grad()
local get_alibi_biases = tide.no_grad()(function(n_heads, mask)
    local m = get_slopes(n_heads):to(mask.device)
    -- distance = mask.cumsum(dim=-1)
    local distance = mask:cumsum({ dim = -1 })
    -- return distance[:, :, None] * m[None, None, :]
    return distance[{ {}, {}, tide.newaxis }] * m[{ tide.newaxis, tide.newaxis, {} }]
end)

-- class AlibiMultiHeadAttention(MultiHeadAttention):
local AlibiMultiHeadAttention = MultiHeadAttention:extend("AlibiMultiHeadAttention")
function AlibiMultiHeadAttention:init(heads, d_model, dropout_prob)
    MultiHeadAttention.init(self, heads, d_model, dropout_prob or 0.1)
    self.alibi_biases = nil
end

function AlibiMultiHeadAttention:forward(args)
    local query, key, value, mask = args.query, args.key, args.value, args.mask
    assert(mask ~= nil)
    -- assert mask.shape[0] == mask.shape[1] and mask.shape[2] == 1
    assert(mask.shape[1] == mask.shape[2] and mask.shape[3] == 1)
    local seq_len, batch_size = query.shape[1], query.shape[2]
    mask = self:prepare_mask(mask, query.shape, key.shape)
    query = self.query(query)
    key = self.key(key)
    value = self.value(value)
    local scores = self:get_scores(query, key)
    scores = scores * self.scale
    -- if self.alibi_biases is None or self.alibi_biases.shape[1] < seq_len:
    if self.alibi_biases == nil or self.alibi_biases.shape[2] < seq_len then
        -- self.alibi_biases = get_alibi_biases(scores.shape[-1], mask[:, :, 0, 0])
        self.alibi_biases = get_alibi_biases(scores.shape[-1], mask[{ {}, {}, 1, 1 }])
    end
    -- scores += self.alibi_biases[:seq_len, :seq_len, None, :]
    scores = scores + self.alibi_biases[{ { 1, seq_len }, { 1, seq_len }, tide.newaxis, {} }]
    scores = scores:masked_fill(mask:eq(0), -math.huge)
    local attn = self.softmax(scores)
    attn = self.dropout(attn)
    local x = tide.einsum("ijbh,jbhd->ibhd", attn, value)
    x = x:reshape(seq_len, batch_size, -1)
    return self.output(x)
end

describe("labml_nn transformers/alibi", function()
    it("_test_alibi: get_slopes(12) and get_alibi_biases(12, mask)[:, :, 3] match PyTorch", function()
        local slopes = get_slopes(12)
        assert.are.equal(tide.float32, slopes.dtype)
        close({ 0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625, 0.7071067690849304,
            0.3535533845424652, 0.1767766773700714, 0.0883883386850357 }, slopes)
        -- mask = subsequent_mask(8)[:, :, 0]
        local mask = subsequent_mask(8)[{ {}, {}, 1 }]
        assert.are.equal(tide.int64, mask:cumsum({ dim = -1 }).dtype)
        local biases = get_alibi_biases(12, mask)
        assert.is_false(biases.requires_grad)
        -- get_alibi_biases(12, mask)[:, :, 3]  (0-based head 3 is Lua's 4)
        local expected = {}
        for i = 1, 8 do
            for j = 1, 8 do expected[#expected + 1] = 0.0625 * math.min(i, j) end
        end
        close(expected, biases[{ {}, {}, 4 }])
    end)

    it("AlibiMultiHeadAttention forward and a few steps", function()
        tide.manual_seed(3)
        local mha = AlibiMultiHeadAttention(4, 8, 0.0)
        local opt = optim.Adam(mha:parameters(), { lr = 1e-2 })
        local x = tide.randn(6, 2, 8)
        local mask = subsequent_mask(6)
        local first, last
        for _ = 1, 5 do
            local out = mha({ query = x, key = x, value = x, mask = mask })
            assert.are.same({ 6, 2, 8 }, out.shape)
            local loss = (out ^ 2):mean()
            opt:zero_grad(); loss:backward(); opt:step()
            first = first or loss:item(); last = loss:item()
        end
        assert.is_true(last < first)
        assert.are.same({ 6, 6, 4 }, mha.alibi_biases.shape)
    end)
end)

---------------------------------------------------------------------------------------------
-- 4. lstm/__init__.py
---------------------------------------------------------------------------------------------
-- class LSTMCell(nn.Module):
local LSTMCell = nn.Module:extend("LSTMCell")
-- def __init__(self, input_size: int, hidden_size: int, layer_norm: bool = False):
function LSTMCell:init(input_size, hidden_size, layer_norm)
    self.hidden_lin = nn.Linear(hidden_size, 4 * hidden_size)
    -- self.input_lin = nn.Linear(input_size, 4 * hidden_size, bias=False)
    self.input_lin = nn.Linear(input_size, 4 * hidden_size, { bias = false })
    if layer_norm then
        -- self.layer_norm = nn.ModuleList([nn.LayerNorm(hidden_size) for _ in range(4)])
        local lns = {}
        for _ = 1, 4 do lns[#lns + 1] = nn.LayerNorm(hidden_size) end
        self.layer_norm = nn.ModuleList(lns)
        self.layer_norm_c = nn.LayerNorm(hidden_size)
    else
        local ids = {}
        for _ = 1, 4 do ids[#ids + 1] = nn.Identity() end
        self.layer_norm = nn.ModuleList(ids)
        self.layer_norm_c = nn.Identity()
    end
end

function LSTMCell:forward(x, h, c)
    local ifgo = self.hidden_lin(h) + self.input_lin(x)
    -- ifgo = ifgo.chunk(4, dim=-1)
    ifgo = ifgo:chunk(4, { dim = -1 })
    -- ifgo = [self.layer_norm[i](ifgo[i]) for i in range(4)]
    local normed = {}
    for i = 1, 4 do normed[i] = self.layer_norm[i](ifgo[i]) end
    -- i, f, g, o = ifgo
    local i, f, g, o = unpack(normed)
    local c_next = tide.sigmoid(f) * c + tide.sigmoid(i) * tide.tanh(g)
    local h_next = tide.sigmoid(o) * tide.tanh(self.layer_norm_c(c_next))
    return h_next, c_next
end

-- class LSTM(nn.Module):
local LSTM = nn.Module:extend("LSTM")
function LSTM:init(input_size, hidden_size, n_layers)
    self.n_layers = n_layers
    self.hidden_size = hidden_size
    -- self.cells = nn.ModuleList([LSTMCell(input_size, hidden_size)] +
    --                            [LSTMCell(hidden_size, hidden_size) for _ in range(n_layers - 1)])
    local cells = { LSTMCell(input_size, hidden_size) }
    for _ = 1, n_layers - 1 do cells[#cells + 1] = LSTMCell(hidden_size, hidden_size) end
    self.cells = nn.ModuleList(cells)
end

function LSTM:forward(x, state)
    -- n_steps, batch_size = x.shape[:2]
    local n_steps, batch_size = unpack(x.shape[{ { 1, 2 } }])
    local h, c
    if state == nil then
        h, c = {}, {}
        for l = 1, self.n_layers do
            h[l] = x:new_zeros(batch_size, self.hidden_size)
            c[l] = x:new_zeros(batch_size, self.hidden_size)
        end
    else
        -- (h, c) = state
        h, c = unpack(state)
        -- h, c = list(torch.unbind(h)), list(torch.unbind(c))
        h, c = tide.unbind(h), tide.unbind(c)
    end
    local out = {}
    for t = 1, n_steps do
        local inp = x[t]
        for layer = 1, self.n_layers do
            h[layer], c[layer] = self.cells[layer](inp, h[layer], c[layer])
            inp = h[layer]
        end
        -- out.append(h[-1])
        out[#out + 1] = h[#h]
    end
    out = tide.stack(out)
    h = tide.stack(h)
    c = tide.stack(c)
    return out, { h, c }
end

-- the reference values' deterministic weights and inputs, as in the Python check:
-- for name, p in m.named_parameters():
--     if not p.dtype.is_floating_point: continue   (a tide dtype is a string: p:is_floating_point())
--     p.data = torch.sin(torch.arange(p.numel()).float() + len(name)).view_as(p) * 0.5
local function fill(m)
    for _, np in ipairs(m:named_parameters()) do
        local name, p = np[1], np[2]
        if p:is_floating_point() then
            p.data = tide.sin(tide.arange(p:numel()):float() + #name):view_as(p) * 0.5
        end
    end
end

describe("labml_nn lstm", function()
    -- x = torch.sin(torch.arange(24).float()).view(4, 2, 3)
    local function inputs() return tide.sin(tide.arange(24):float()):view(4, 2, 3) end

    it("LSTMCell with and without layer_norm matches PyTorch", function()
        local x = inputs()
        local expected = {
            [false] = { { 0.010413393378257751, 0.4100797474384308, 0.2113325446844101, -0.08793944865465164 },
                { 0.03386911749839783, 0.7883352041244507, 0.25451844930648804, -0.2944297194480896 } },
            [true] = { { -0.18399246037006378, 0.04189726710319519, -0.15395504236221313, -0.20655690133571625 },
                { -0.0017249733209609985, 0.1825748085975647, -0.23713430762290955, -0.3567589223384857 } },
        }
        for _, ln in ipairs({ false, true }) do
            -- cell = LSTMCell(3, 2, layer_norm=ln)
            local cell = LSTMCell(3, 2, ln)
            fill(cell)
            local h0 = tide.cos(tide.arange(4):float()):view(2, 2)
            local c0 = h0 * 0.5
            -- h, c = cell(x[0], h0, c0)
            local h, c = cell(x[1], h0, c0)
            close(expected[ln][1], h)
            close(expected[ln][2], c)
        end
    end)

    it("LSTM over 2 layers matches PyTorch, takes (h, c) back as its state, and trains", function()
        local x = inputs()
        local lstm = LSTM(3, 2, 2)
        fill(lstm)
        -- out, (h, c) = lstm(x)
        local out, state = lstm(x)
        local h, c = unpack(state)
        assert.are.same({ 4, 2, 2 }, out.shape)
        assert.are.same({ 2, 2, 2 }, h.shape)
        close({ 0.07509031891822815, 0.02098505012691021, 0.07235446572303772, 0.022945484146475792,
            0.11044548451900482, 0.03435904532670975, 0.1103270873427391, 0.03260310739278793,
            0.12558023631572723, 0.0452202633023262, 0.1309720128774643, 0.03336305171251297,
            0.13142013549804688, 0.054981622844934464, 0.14243680238723755, 0.028766879811882973 }, out)
        close({ 0.7918705344200134, -0.06638064980506897, 0.024032505229115486, 0.47539520263671875,
            0.36630305647850037, 0.13638173043727875, 0.3808249831199646, 0.06841186434030533 }, c)
        -- out2, _ = lstm(x, (h, c)); out2[-1]
        local out2 = lstm(x, { h, c })
        close({ 0.13926956057548523, 0.059895094484090805, 0.15130753815174103, 0.026333993300795555 },
            out2[-1])
        -- a few SGD steps on a regression target
        local opt = optim.SGD(lstm:parameters(), { lr = 0.5 })
        local target = tide.randn(4, 2, 2)
        local first, last
        for _ = 1, 5 do
            local o = lstm(x)
            local loss = F.mse_loss(o, target)
            opt:zero_grad(); loss:backward(); opt:step()
            first = first or loss:item(); last = loss:item()
        end
        assert.is_true(last < first)
    end)
end)

---------------------------------------------------------------------------------------------
-- 5. hypernetworks/hyper_lstm.py
---------------------------------------------------------------------------------------------
-- class HyperLSTMCell(nn.Module):
local HyperLSTMCell = nn.Module:extend("HyperLSTMCell")
function HyperLSTMCell:init(input_size, hidden_size, hyper_size, n_z)
    -- self.hyper = LSTMCell(hidden_size + input_size, hyper_size, layer_norm=True)
    self.hyper = LSTMCell(hidden_size + input_size, hyper_size, true)
    self.z_h = nn.Linear(hyper_size, 4 * n_z)
    self.z_x = nn.Linear(hyper_size, 4 * n_z)
    -- self.z_b = nn.Linear(hyper_size, 4 * n_z, bias=False)
    self.z_b = nn.Linear(hyper_size, 4 * n_z, { bias = false })
    -- d_h = [nn.Linear(n_z, hidden_size, bias=False) for _ in range(4)]
    local d_h, d_x, d_b = {}, {}, {}
    for i = 1, 4 do d_h[i] = nn.Linear(n_z, hidden_size, { bias = false }) end
    self.d_h = nn.ModuleList(d_h)
    for i = 1, 4 do d_x[i] = nn.Linear(n_z, hidden_size, { bias = false }) end
    self.d_x = nn.ModuleList(d_x)
    for i = 1, 4 do d_b[i] = nn.Linear(n_z, hidden_size) end
    self.d_b = nn.ModuleList(d_b)
    -- self.w_h = nn.ParameterList([nn.Parameter(torch.zeros(hidden_size, hidden_size)) for _ in range(4)])
    local w_h, w_x, lns = {}, {}, {}
    for i = 1, 4 do w_h[i] = nn.Parameter(tide.zeros(hidden_size, hidden_size)) end
    self.w_h = nn.ParameterList(w_h)
    for i = 1, 4 do w_x[i] = nn.Parameter(tide.zeros(hidden_size, input_size)) end
    self.w_x = nn.ParameterList(w_x)
    for i = 1, 4 do lns[i] = nn.LayerNorm(hidden_size) end
    self.layer_norm = nn.ModuleList(lns)
    self.layer_norm_c = nn.LayerNorm(hidden_size)
end

function HyperLSTMCell:forward(x, h, c, h_hat, c_hat)
    -- x_hat = torch.cat((h, x), dim=-1)
    local x_hat = tide.cat({ h, x }, { dim = -1 })
    h_hat, c_hat = self.hyper(x_hat, h_hat, c_hat)
    -- z_h = self.z_h(h_hat).chunk(4, dim=-1)
    local z_h = self.z_h(h_hat):chunk(4, { dim = -1 })
    local z_x = self.z_x(h_hat):chunk(4, { dim = -1 })
    local z_b = self.z_b(h_hat):chunk(4, { dim = -1 })
    local ifgo = {}
    for i = 1, 4 do
        local d_h = self.d_h[i](z_h[i])
        local d_x = self.d_x[i](z_x[i])
        -- y = d_h * torch.einsum('ij,bj->bi', self.w_h[i], h) + \
        --     d_x * torch.einsum('ij,bj->bi', self.w_x[i], x) + \
        --     self.d_b[i](z_b[i])
        local y = d_h * tide.einsum('ij,bj->bi', self.w_h[i], h) +
            d_x * tide.einsum('ij,bj->bi', self.w_x[i], x) +
            self.d_b[i](z_b[i])
        -- ifgo.append(self.layer_norm[i](y))
        ifgo[#ifgo + 1] = self.layer_norm[i](y)
    end
    local i, f, g, o = unpack(ifgo)
    local c_next = tide.sigmoid(f) * c + tide.sigmoid(i) * tide.tanh(g)
    local h_next = tide.sigmoid(o) * tide.tanh(self.layer_norm_c(c_next))
    return h_next, c_next, h_hat, c_hat
end

-- class HyperLSTM(nn.Module):
local HyperLSTM = nn.Module:extend("HyperLSTM")
function HyperLSTM:init(input_size, hidden_size, hyper_size, n_z, n_layers)
    self.n_layers = n_layers
    self.hidden_size = hidden_size
    self.hyper_size = hyper_size
    local cells = { HyperLSTMCell(input_size, hidden_size, hyper_size, n_z) }
    for _ = 1, n_layers - 1 do cells[#cells + 1] = HyperLSTMCell(hidden_size, hidden_size, hyper_size, n_z) end
    self.cells = nn.ModuleList(cells)
end

function HyperLSTM:forward(x, state)
    local n_steps, batch_size = unpack(x.shape[{ { 1, 2 } }])
    local h, c, h_hat, c_hat
    if state == nil then
        h, c, h_hat, c_hat = {}, {}, {}, {}
        for l = 1, self.n_layers do
            h[l] = x:new_zeros(batch_size, self.hidden_size)
            c[l] = x:new_zeros(batch_size, self.hidden_size)
            h_hat[l] = x:new_zeros(batch_size, self.hyper_size)
            c_hat[l] = x:new_zeros(batch_size, self.hyper_size)
        end
    else
        h, c, h_hat, c_hat = unpack(state)
        h, c = tide.unbind(h), tide.unbind(c)
        h_hat, c_hat = tide.unbind(h_hat), tide.unbind(c_hat)
    end
    local out = {}
    for t = 1, n_steps do
        local inp = x[t]
        for layer = 1, self.n_layers do
            -- h[layer], c[layer], h_hat[layer], c_hat[layer] = \
            --     self.cells[layer](inp, h[layer], c[layer], h_hat[layer], c_hat[layer])
            h[layer], c[layer], h_hat[layer], c_hat[layer] =
                self.cells[layer](inp, h[layer], c[layer], h_hat[layer], c_hat[layer])
            inp = h[layer]
        end
        out[#out + 1] = h[#h]
    end
    out = tide.stack(out)
    h = tide.stack(h)
    c = tide.stack(c)
    h_hat = tide.stack(h_hat)
    c_hat = tide.stack(c_hat)
    return out, { h, c, h_hat, c_hat }
end

describe("labml_nn hypernetworks/hyper_lstm", function()
    it("HyperLSTM(3, 2, 4, 2, 2) matches PyTorch and trains", function()
        local x = tide.sin(tide.arange(24):float()):view(4, 2, 3)
        local hl = HyperLSTM(3, 2, 4, 2, 2)
        fill(hl)
        local out, state = hl(x)
        local c_hat = state[4]
        assert.are.same({ 4, 2, 2 }, out.shape)
        assert.are.same({ 2, 2, 4 }, c_hat.shape)
        close({ -0.1822134405374527, 0.2976345419883728, -0.1822134256362915, 0.2976345419883728,
            -0.18222008645534515, 0.2976377606391907, -0.18222013115882874, 0.2976377606391907,
            -0.18222157657146454, 0.29763850569725037, -0.18222156167030334, 0.29763850569725037,
            -0.1822221279144287, 0.29763877391815186, -0.1822221279144287, 0.29763877391815186 }, out)
        close({ -0.643027663230896, 0.2303759902715683, 0.520442545413971, -0.4000629782676697,
            0.024947714060544968, 0.5891185998916626, 0.9069057703018188, 0.5781882405281067,
            -0.5923329591751099, 0.2971356511116028, 0.747191309928894, -0.4633484482765198,
            -0.5923327803611755, 0.29713523387908936, 0.747191309928894, -0.46334874629974365 }, c_hat)
        -- the state goes back in; Adam trains it
        local out2 = hl(x, state)
        assert.are.same({ 4, 2, 2 }, out2.shape)
        tide.manual_seed(5)
        local opt = optim.Adam(hl:parameters(), { lr = 1e-2 })
        local target = tide.randn(4, 2, 2)
        local first, last
        for _ = 1, 5 do
            local o = hl(x)
            local loss = F.mse_loss(o, target)
            opt:zero_grad(); loss:backward(); opt:step()
            first = first or loss:item(); last = loss:item()
        end
        assert.is_true(last < first)
        assert.is_true(hl.cells[1].w_h[1].grad:abs():sum():item() > 0)
    end)
end)

---------------------------------------------------------------------------------------------
-- 6. transformers/mlp_mixer, transformers/gmlp, transformers/aft
---------------------------------------------------------------------------------------------
-- class MLPMixer(nn.Module):
local MLPMixer = nn.Module:extend("MLPMixer")
function MLPMixer:init(mlp)
    self.mlp = mlp
end

-- def forward(self, query, key, value, mask=None):
function MLPMixer:forward(query, key, value, mask)
    -- assert query is key and key is value
    assert(rawequal(query, key) and rawequal(key, value))
    assert(mask == nil)
    local x = query
    -- x = x.transpose(0, 2)
    x = x:transpose(1, 3)
    x = self.mlp(x)
    x = x:transpose(1, 3)
    return x
end

-- labml_nn/transformers/feed_forward.py's FeedForward (the mixer's mlp)
local FeedForward = nn.Module:extend("FeedForward")
-- def __init__(self, d_model, d_ff, dropout=0.1, activation=nn.ReLU(), is_gated=False, bias1=True, bias2=True, bias_gate=True):
function FeedForward:init(d_model, d_ff, dropout, activation)
    self.layer1 = nn.Linear(d_model, d_ff)
    self.layer2 = nn.Linear(d_ff, d_model)
    self.dropout = nn.Dropout(dropout or 0.1)
    self.activation = activation or nn.ReLU()
    self.is_gated = false
end

function FeedForward:forward(x)
    local g = self.activation(self.layer1(x))
    x = g
    x = self.dropout(x)
    return self.layer2(x)
end

-- class SpacialGatingUnit(nn.Module):
local SpacialGatingUnit = nn.Module:extend("SpacialGatingUnit")
function SpacialGatingUnit:init(d_z, seq_len)
    -- self.norm = nn.LayerNorm([d_z // 2])
    self.norm = nn.LayerNorm({ math.floor(d_z / 2) })
    -- self.weight = nn.Parameter(torch.zeros(seq_len, seq_len).uniform_(-0.01, 0.01), requires_grad=True)
    self.weight = nn.Parameter(tide.zeros(seq_len, seq_len):uniform_(-0.01, 0.01), { requires_grad = true })
    self.bias = nn.Parameter(tide.ones(seq_len), { requires_grad = true })
end

function SpacialGatingUnit:forward(z, mask)
    local seq_len = z.shape[1]
    -- z1, z2 = torch.chunk(z, 2, dim=-1)
    local z1, z2 = unpack(tide.chunk(z, 2, { dim = -1 }))
    if mask ~= nil then
        assert(mask.shape[1] == 1 or mask.shape[1] == seq_len)
        assert(mask.shape[2] == seq_len)
        assert(mask.shape[3] == 1)
        -- mask = mask[:, :, 0]
        mask = mask[{ {}, {}, 1 }]
    end
    z2 = self.norm(z2)
    -- weight = self.weight[:seq_len, :seq_len]
    local weight = self.weight[{ { 1, seq_len }, { 1, seq_len } }]
    if mask ~= nil then
        weight = weight * mask
    end
    -- z2 = torch.einsum('ij,jbd->ibd', weight, z2) + self.bias[:seq_len, None, None]
    z2 = tide.einsum('ij,jbd->ibd', weight, z2) + self.bias[{ { 1, seq_len }, tide.newaxis, tide.newaxis }]
    return z1 * z2
end

-- class GMLPBlock(nn.Module):
local GMLPBlock = nn.Module:extend("GMLPBlock")
function GMLPBlock:init(d_model, d_ffn, seq_len)
    self.norm = nn.LayerNorm({ d_model })
    self.activation = nn.GELU()
    self.proj1 = nn.Linear(d_model, d_ffn)
    self.sgu = SpacialGatingUnit(d_ffn, seq_len)
    -- self.proj2 = nn.Linear(d_ffn // 2, d_model)
    self.proj2 = nn.Linear(math.floor(d_ffn / 2), d_model)
    self.size = d_model
end

-- def forward(self, *, x, mask=None):
function GMLPBlock:forward(args)
    local x, mask = args.x, args.mask
    local shortcut = x
    x = self.norm(x)
    local z = self.activation(self.proj1(x))
    z = self.sgu(z, mask)
    z = self.proj2(z)
    return z + shortcut
end

-- class AFTLocal(nn.Module):
local AFTLocal = nn.Module:extend("AFTLocal")
-- @staticmethod
function AFTLocal.create_local_mask(seq_len, local_window_size)
    -- local_mask = torch.ones(seq_len, seq_len, dtype=torch.bool)
    local local_mask = tide.ones(seq_len, seq_len, { dtype = tide.bool })
    local_mask = tide.tril(local_mask, local_window_size - 1)
    local_mask = tide.triu(local_mask, -(local_window_size - 1))
    return local_mask
end

function AFTLocal:init(d_model, seq_len, local_window_size, bias)
    if bias == nil then bias = true end
    self.local_window_size = local_window_size
    self.query = nn.Linear(d_model, d_model, { bias = bias })
    self.key = nn.Linear(d_model, d_model, { bias = bias })
    self.value = nn.Linear(d_model, d_model, { bias = bias })
    -- self.pos_bias = nn.Parameter(torch.zeros(seq_len, seq_len), requires_grad=True)
    self.pos_bias = nn.Parameter(tide.zeros(seq_len, seq_len), { requires_grad = true })
    -- self.local_mask = nn.Parameter(self.create_local_mask(seq_len, local_window_size), requires_grad=False)
    self.local_mask = nn.Parameter(self.create_local_mask(seq_len, local_window_size), { requires_grad = false })
    self.activation = nn.Sigmoid()
    self.output = nn.Linear(d_model, d_model)
end

function AFTLocal:forward(args)
    local query, key, value, mask = args.query, args.key, args.value, args.mask
    -- seq_len, _, _ = query.shape
    local seq_len = query.shape[1]
    if mask ~= nil then
        assert(mask.shape[1] == 1 or mask.shape[1] == query.shape[1])
        assert(mask.shape[2] == key.shape[1])
        assert(mask.shape[3] == 1 or mask.shape[3] == query.shape[2])
    end
    query = self.query(query)
    key = self.key(key)
    value = self.value(value)
    -- pos_bias = self.pos_bias[:seq_len, :seq_len] * self.local_mask[:seq_len, :seq_len]
    local pos_bias = self.pos_bias[{ { 1, seq_len }, { 1, seq_len } }] * self.local_mask[{ { 1, seq_len }, { 1, seq_len } }]
    pos_bias = pos_bias:unsqueeze(-1)
    -- pos_bias.masked_fill_(~mask, float('-inf'))
    pos_bias:masked_fill_(tide.bitwise_not(mask), -math.huge)
    -- max_key = key.max(dim=0, keepdims=True)[0]
    local max_key = key:max({ dim = 1, keepdims = true })
    -- max_pos_bias = pos_bias.max(dim=1,  keepdims=True)[0]
    local max_pos_bias = pos_bias:max({ dim = 2, keepdims = true })
    local exp_key = tide.exp(key - max_key)
    local exp_pos_bias = tide.exp(pos_bias - max_pos_bias)
    local num = tide.einsum('ijb,jbd->ibd', exp_pos_bias, exp_key * value)
    local den = tide.einsum('ijb,jbd->ibd', exp_pos_bias, exp_key)
    local y = self.activation(query) * num / den
    return self.output(y)
end

describe("labml_nn mlp_mixer, gmlp, aft", function()
    local function inputs() return tide.sin(tide.arange(40):float()):view(5, 2, 4) end
    local causal = function() return tide.tril(tide.ones(5, 5)):to(tide.bool):unsqueeze(-1) end

    it("MLPMixer mixes along the sequence with FeedForward(seq_len, d_ff)", function()
        tide.manual_seed(6)
        local mixer = MLPMixer(FeedForward(5, 7, 0.0))
        local x = tide.randn(5, 2, 4, { requires_grad = true })
        local y = mixer(x, x, x)
        assert.are.same({ 5, 2, 4 }, y.shape)
        y:sum():backward()
        assert.are.same({ 5, 2, 4 }, x.grad.shape)
        assert.has_error(function() mixer(x, x:clone(), x) end)
    end)

    it("GMLPBlock with SpacialGatingUnit matches PyTorch, with and without the mask", function()
        local g = GMLPBlock(4, 8, 5)
        assert.is_true(g.sgu.weight:abs():max():item() <= 0.01)
        fill(g)
        local x = inputs()
        close({ -0.2823033630847931, 0.35385629534721375, 0.6351189613342285, 0.3465256094932556,
            -1.0387455224990845, -1.4185830354690552, -0.5905007719993591, 0.882684051990509,
            0.7039082050323486, -0.06138366460800171, -0.8335019946098328, -0.7886924743652344,
            -0.8048498630523682, -0.059790462255477905, 0.6923923492431641, 0.8794589638710022,
            -0.587999701499939, -1.4233582019805908, -1.040909767150879, 0.35021084547042847,
            0.6463820934295654, 0.36110806465148926, -0.3145451247692108, -0.6116822957992554,
            -1.1584372520446777, -0.6248267889022827, 0.46528947353363037, 1.1968278884887695,
            -0.01627904176712036, -1.1483186483383179, -1.26115882396698, -0.20293621718883514,
            0.2879720628261566, 0.49754273891448975, 0.25534382462501526, -0.20859724283218384,
            -1.2555327415466309, -1.1470718383789062, 0.024451494216918945, 1.1821638345718384 },
            g({ x = x, mask = causal() }), 1e-4)
        local nomask = g({ x = x })
        close({ -0.2773108184337616, 0.34752997756004333, 0.638396680355072, 0.3485669493675232,
            -1.03306245803833, -1.4263397455215454, -0.5860434770584106, 0.8846138715744019 },
            nomask[{ { 1, 1 } }], 1e-4)
    end)

    it("AFTLocal: create_local_mask(5, 2), forward matches PyTorch, and trains", function()
        local m = AFTLocal.create_local_mask(5, 2)
        assert.are.equal(tide.bool, m.dtype)
        assert.are.same({ 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1 },
            m:int():flatten():totable())
        local aft = AFTLocal(4, 5, 2)
        -- named_parameters holds the bool local_mask too, which does not require grad
        local names = {}
        for _, np in ipairs(aft:named_parameters()) do names[#names + 1] = np[1] end
        assert.are.same({ "pos_bias", "local_mask", "query.weight", "query.bias", "key.weight", "key.bias",
            "value.weight", "value.bias", "output.weight", "output.bias" }, names)
        assert.is_false(aft.local_mask.requires_grad)
        fill(aft)
        local x = inputs()
        local y = aft({ query = x, key = x, value = x, mask = causal() })
        close({ -0.636328935623169, -0.11280661821365356, 0.14316052198410034, 0.42731142044067383,
            -0.6297906041145325, -0.03217688202857971, 0.031215950846672058, 0.49302539229393005,
            -0.5920590162277222, -0.1765499711036682, 0.18222150206565857, 0.4399908483028412,
            -0.7577100992202759, 0.05837848782539368, 0.04075361788272858, 0.3900015652179718,
            -0.737978458404541, -0.05244414508342743, 0.16589896380901337, 0.33722326159477234,
            -0.7753545045852661, -0.1368740200996399, 0.31364911794662476, 0.22850123047828674,
            -0.7247626781463623, -0.07124541699886322, 0.1772618144750595, 0.3411700129508972,
            -0.7674575448036194, -0.11390389502048492, 0.27572357654571533, 0.2551106810569763,
            -0.7027269005775452, -0.1399247795343399, 0.24500972032546997, 0.3212834298610687,
            -0.7789614796638489, 0.013598024845123291, 0.120545893907547, 0.33047059178352356 }, y, 1e-4)
        -- a few Adam steps over the trainable parameters
        local params = {}
        for _, p in ipairs(aft:parameters()) do if p.requires_grad then params[#params + 1] = p end end
        local opt = optim.Adam(params, { lr = 1e-2 })
        local target = tide.zeros(5, 2, 4)
        local first, last
        for _ = 1, 5 do
            local loss = F.mse_loss(aft({ query = x, key = x, value = x, mask = causal() }), target)
            opt:zero_grad(); loss:backward(); opt:step()
            first = first or loss:item(); last = loss:item()
        end
        assert.is_true(last < first)
        assert.is_true(aft.pos_bias.grad:abs():sum():item() > 0)
    end)
end)

---------------------------------------------------------------------------------------------
-- Gaps found by these ports
---------------------------------------------------------------------------------------------
describe("gaps found porting labml_nn", function()
    -- AFTLocal's torch.einsum('ijb,jbd->ibd', exp_pos_bias, exp_key) has exp_pos_bias's b of
    -- size 1 against exp_key's 2: PyTorch broadcasts a named subscript of size 1
    it("einsum broadcasts a subscript of size 1 against the other operands' size", function()
        tide.manual_seed(7)
        local a = tide.randn(2, 3, 1, { requires_grad = true })
        local b = tide.randn(3, 2, 4)
        local y = tide.einsum('ijb,jbd->ibd', a, b)
        assert.are.same({ 2, 2, 4 }, y.shape)
        assert.is_true(y:allclose(tide.einsum('ijb,jbd->ibd', a:expand(2, 3, 2), b), { atol = 1e-6 }))
        y:sum():backward()
        assert.are.same({ 2, 3, 1 }, a.grad.shape)
        -- torch.einsum('ij,j->i', torch.ones(2, 1), torch.arange(3.)) is tensor([3., 3.])
        assert.are.same({ 3, 3 }, tide.einsum('ij,j->i', tide.ones(2, 1), tide.arange(3.)):totable())
        -- sizes that neither agree nor are 1 raise, naming both and the fix
        local ok, err = pcall(tide.einsum, 'ij,j->i', tide.ones(2, 2), tide.arange(3.))
        assert.is_false(ok)
        assert.matches("tide: einsum: subscript j has sizes 2 and 3 %(operands must agree on a " ..
            "subscript's size, or have size 1 there to broadcast%)", tostring(err))
        -- a subscript repeated in one operand (a diagonal) does not broadcast, as PyTorch's
        ok, err = pcall(tide.einsum, 'ii->i', tide.ones(1, 3))
        assert.is_false(ok)
        assert.matches("tide: einsum: subscript i has sizes 1 and 3", tostring(err))
    end)
end)
