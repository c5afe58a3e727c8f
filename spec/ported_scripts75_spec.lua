-- ported_scripts75_spec.lua — BlinkDL/ChatRWKV's RWKV_in_150_lines.py (the RWKV_RNN module: its
-- weight dict with the '.time_' squeeze and -exp(time_decay), the w.blocks namespace, layer_norm,
-- channel_mixing, time_mixing with the wkv state rows updated in place, forward(token, state),
-- sample_logits with its top_p cutoff) and lucidrains/minGRU-pytorch's minGRU_pytorch/minGRU.py
-- (g, log_g, heinsen_associative_scan_log, minGRU's parallel and sequential paths) with minLM.py
-- (minLM with CausalDepthWiseConv1d), ported line for line at tiny sizes. The Python line stands
-- above each Lua line that differs from it. Tokens, dims and state rows are 1-based; RWKV's block
-- numbers stay 0-based (they name weights: "blocks.0.att.key.weight").
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- the deterministic stand-in for trained weights, the same formula in the PyTorch reference:
-- (0.5 * torch.sin(0.7 * torch.arange(1., n + 1) + j)).view(*shape)
local function fw(j, shape)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    return (0.5 * (0.7 * tide.arange(1., n + 1) + j):sin()):view(shape)
end

local function flat(t)
    return t:reshape(-1):tolist()
end

---------------------------------------------------------------------------------------------
-- 1. BlinkDL/ChatRWKV RWKV_in_150_lines.py
---------------------------------------------------------------------------------------------
-- args = types.SimpleNamespace(); args.n_layer = 24; args.n_embd = 1024
local args = { n_layer = 2, n_embd = 8, vocab = 12 }

-- stands in for torch.load(args.MODEL_NAME + '.pth'): RWKV-4's names and shapes, in this order
local function load_weights(a)
    local C, names = a.n_embd, { { "emb.weight", { a.vocab, a.n_embd } } }
    local function add(k, shape) names[#names + 1] = { k, shape } end
    for i = 0, a.n_layer - 1 do
        local b = "blocks." .. i .. "."
        if i == 0 then add(b .. "ln0.weight", { C }); add(b .. "ln0.bias", { C }) end
        for _, ln in ipairs({ "ln1", "ln2" }) do
            add(b .. ln .. ".weight", { C }); add(b .. ln .. ".bias", { C })
        end
        add(b .. "att.time_decay", { C }); add(b .. "att.time_first", { C })
        for _, m in ipairs({ "k", "v", "r" }) do add(b .. "att.time_mix_" .. m, { 1, 1, C }) end
        for _, m in ipairs({ "key", "value", "receptance", "output" }) do
            add(b .. "att." .. m .. ".weight", { C, C })
        end
        add(b .. "ffn.time_mix_k", { 1, 1, C }); add(b .. "ffn.time_mix_r", { 1, 1, C })
        add(b .. "ffn.key.weight", { 4 * C, C }); add(b .. "ffn.receptance.weight", { C, C })
        add(b .. "ffn.value.weight", { C, 4 * C })
    end
    add("ln_out.weight", { C }); add("ln_out.bias", { C }); add("head.weight", { a.vocab, C })
    local w = {}
    for j, ks in ipairs(names) do w[ks[1]] = fw(j, ks[2]) end
    return w, #names
end

-- class RWKV_RNN(torch.jit.ScriptModule):
local RWKV_RNN = nn.Module:extend("RWKV_RNN")
function RWKV_RNN:init(a)
    self.args = a
    self:eval() -- set torch to inference mode
    -- w = torch.load(args.MODEL_NAME + '.pth', map_location='cpu')
    local w = load_weights(a)
    -- for k in w.keys():
    for k in pairs(w) do
        -- if      '.time_' in k: w[k] = w[k].squeeze()
        if k:find(".time_", 1, true) then w[k] = w[k]:squeeze() end
        -- if '.time_decay' in k: w[k] = -torch.exp(w[k].float())
        if k:find(".time_decay", 1, true) then
            w[k] = -tide.exp(w[k]:float()) -- the real time decay is like e^{-e^x}
        else
            w[k] = w[k]:float() -- convert to f32 type
        end
    end
    -- self.w = types.SimpleNamespace(); self.w.blocks = {}
    self.w = { blocks = {} } -- set self.w from w
    for k in pairs(w) do -- example: "blocks.0.att.time_first" => self.w.blocks[0].att.time_first
        -- parts = k.split('.'); last = parts.pop()
        local parts = {}
        for p in k:gmatch("[^.]+") do parts[#parts + 1] = p end
        local last = table.remove(parts)
        local here = self.w
        for _, p in ipairs(parts) do
            -- if p.isdigit(): p = int(p)
            if p:match("^%d+$") then p = tonumber(p) end
            -- if not hasattr(here, p): setattr(here, p, types.SimpleNamespace())
            if here[p] == nil then here[p] = {} end
            here = here[p]
        end
        -- setattr(here, last, w[k])
        here[last] = w[k]
    end
end

function RWKV_RNN:layer_norm(x, w)
    -- return F.layer_norm(x, (self.args.n_embd,), weight=w.weight, bias=w.bias)
    return F.layer_norm(x, { self.args.n_embd }, { weight = w.weight, bias = w.bias })
end

-- def channel_mixing(self, x, state, i:int, time_mix_k, time_mix_r, kw, vw, rw):
function RWKV_RNN:channel_mixing(x, state, i, time_mix_k, time_mix_r, kw, vw, rw)
    -- xk = x * time_mix_k + state[5*i+0] * (1 - time_mix_k)
    local xk = x * time_mix_k + state[5 * i + 1] * (1 - time_mix_k)
    local xr = x * time_mix_r + state[5 * i + 1] * (1 - time_mix_r)
    state[5 * i + 1] = x
    -- r = torch.sigmoid(rw @ xr)
    local r = tide.sigmoid(rw:matmul(xr))
    -- k = torch.square(torch.relu(kw @ xk)) # square relu, primer paper
    local k = tide.square(tide.relu(kw:matmul(xk)))
    return r * vw:matmul(k)
end

-- def time_mixing(self, x, state, i:int, time_mix_k, time_mix_v, time_mix_r, time_first,
--                 time_decay, kw, vw, rw, ow):
function RWKV_RNN:time_mixing(x, state, i, time_mix_k, time_mix_v, time_mix_r, time_first,
                              time_decay, kw, vw, rw, ow)
    -- xk = x * time_mix_k + state[5*i+1] * (1 - time_mix_k)
    local xk = x * time_mix_k + state[5 * i + 2] * (1 - time_mix_k)
    local xv = x * time_mix_v + state[5 * i + 2] * (1 - time_mix_v)
    local xr = x * time_mix_r + state[5 * i + 2] * (1 - time_mix_r)
    state[5 * i + 2] = x
    local r = tide.sigmoid(rw:matmul(xr))
    local k = kw:matmul(xk)
    local v = vw:matmul(xv)

    -- aa = state[5*i+2]; bb = state[5*i+3]; pp = state[5*i+4]
    local aa = state[5 * i + 3]
    local bb = state[5 * i + 4]
    local pp = state[5 * i + 5]
    local ww = time_first + k
    local qq = tide.maximum(pp, ww)
    local e1 = tide.exp(pp - qq)
    local e2 = tide.exp(ww - qq)
    local a = e1 * aa + e2 * v
    local b = e1 * bb + e2
    local wkv = a / b
    ww = pp + time_decay
    qq = tide.maximum(ww, k)
    e1 = tide.exp(ww - qq)
    e2 = tide.exp(k - qq)
    -- state[5*i+2] = e1 * aa + e2 * v   (aa, bb, pp are views of these rows: PyTorch's too)
    state[5 * i + 3] = e1 * aa + e2 * v
    state[5 * i + 4] = e1 * bb + e2
    state[5 * i + 5] = qq
    -- return ow @ (r * wkv)
    return ow:matmul(r * wkv)
end

function RWKV_RNN:forward(token, state)
    -- with torch.no_grad():
    return tide.no_grad(function()
        -- if state == None:
        if state == nil then
            state = tide.zeros(self.args.n_layer * 5, self.args.n_embd)
            -- for i in range(self.args.n_layer): state[5*i+4] = -1e30 # -infinity
            for i = 0, self.args.n_layer - 1 do state[5 * i + 5] = -1e30 end
        end

        local x = self.w.emb.weight[token]
        x = self:layer_norm(x, self.w.blocks[0].ln0)
        for i = 0, self.args.n_layer - 1 do
            local att = self.w.blocks[i].att
            x = x + self:time_mixing(self:layer_norm(x, self.w.blocks[i].ln1), state, i,
                att.time_mix_k, att.time_mix_v, att.time_mix_r, att.time_first, att.time_decay,
                att.key.weight, att.value.weight, att.receptance.weight, att.output.weight)
            local ffn = self.w.blocks[i].ffn
            x = x + self:channel_mixing(self:layer_norm(x, self.w.blocks[i].ln2), state, i,
                ffn.time_mix_k, ffn.time_mix_r,
                ffn.key.weight, ffn.value.weight, ffn.receptance.weight)
        end

        -- x = self.w.head.weight @ self.layer_norm(x, self.w.ln_out)
        x = self.w.head.weight:matmul(self:layer_norm(x, self.w.ln_out))
        return x:float(), state
    end)
end

-- def sample_logits(out, temperature=1.0, top_p=0.8):
-- (returns the zeroed probs and the cutoff too, for the check; the draw is random)
local function sample_logits(out, temperature, top_p)
    temperature, top_p = temperature or 1.0, top_p or 0.8
    -- probs = F.softmax(out, dim=-1).numpy()
    local probs = F.softmax(out, { dim = -1 })
    -- sorted_probs = np.sort(probs)[::-1]
    local sorted_probs = probs:sort(1, true)
    -- cumulative_probs = np.cumsum(sorted_probs)
    local cumulative_probs = sorted_probs:cumsum(1)
    -- cutoff = float(sorted_probs[np.argmax(cumulative_probs > top_p)])
    local cutoff = sorted_probs[cumulative_probs:gt(top_p):argmax():item()]:item()
    -- probs[probs < cutoff] = 0
    probs[probs:lt(cutoff)] = 0
    if temperature ~= 1.0 then
        -- probs = probs.pow(1.0 / temperature)  (a NumPy array has no .pow: the script raises
        -- AttributeError for a temperature other than 1; a tide tensor has one)
        probs = probs:pow(1.0 / temperature)
    end
    -- probs = probs / np.sum(probs)
    probs = probs / probs:sum()
    -- out = np.random.choice(a=len(probs), p=probs)
    out = tide.multinomial(probs, 1):item()
    return out, probs, cutoff
end

describe("BlinkDL/ChatRWKV RWKV_in_150_lines.py", function()
    it("RWKV_RNN builds w.blocks, carries the state over 3 tokens, matches PyTorch", function()
        local model = RWKV_RNN(args)
        local _, n = load_weights(args)
        assert.are.equal(42, n)
        assert.are.same({ 8 }, model.w.blocks[1].att.time_mix_k.shape) -- squeezed from 1x1x8
        -- -exp(0.5 * sin(0.7 * (1..8) + j)), j = 8: blocks.0.att.time_decay's place in the list
        local td = -(0.5 * (0.7 * tide.arange(1., 9.) + 8):sin()):exp()
        assert.is_true(tide.allclose(model.w.blocks[0].att.time_decay, td))
        assert.is_true(model.w.blocks[0].ln0 ~= nil and model.w.blocks[1].ln0 == nil)
        -- PyTorch 1.13, the script with load_weights's dict, tokens 3, 7, 0 (0-based)
        local want = {
            { 0.90965205, 1.1592084, 0.88843226, 0.21886453, -0.54893935, -1.0703499,
                -1.111306, -0.65343368, 0.097741127, 0.80504251, 1.1509941, 0.98029363 },
            { 0.36179057, 0.87058866, 0.98860961, 0.66287255, 0.039594941, -0.60145855,
                -0.97253478, -0.90706682, -0.43445104, 0.23317702, 0.79614282, 1.0017432 },
            { 0.42656252, 0.88199949, 0.94153708, 0.57844573, -0.044289291, -0.64714682,
                -0.95952034, -0.84118998, -0.34528348, 0.30561253, 0.81933075, 0.96527553 } }
        local state, out
        -- for token in tokenizer.encode(context).ids:
        for step, token in ipairs({ 4, 8, 1 }) do
            --  init_out, init_state = model.forward(token, init_state)
            out, state = model:forward(token, state)
            assert.are.same({ 12 }, out.shape)
            assert_close_list(want[step], out:tolist(), 1e-5, "logits " .. step)
        end
        assert.are.same({ 10, 8 }, state.shape)
        assert_close_list({
            0.63813853, 0.0040580044, -0.55960548, -0.43048739, -0.43432602, -0.55431074,
            -0.69770533, -0.69895899, -0.21131411, 0.70185065, 0.50180763, 0.50068879,
            0.83484685, 0.42828, -0.092997909, -0.56174082, -0.68077207, -0.12222314,
            0.53329909, 1.2744277, 1.7028475, 1.284009, 0.030257106, -0.78921872, 1.1444824,
            1.2397208, 1.4868082, 1.9490049, 2.2874899, 2.3811707, 1.770092, 1.3102798,
            0.31786481, 0.78122437, 0.89391589, 0.60535806, 0.10696316, -0.53544301,
            -0.87561667, -0.82275224, 0.20630816, 0.46053061, -0.35634163, 0.50677973,
            -0.49860311, -0.36742476, -0.565153, -0.98114014, -0.62241203, -0.424256, 0.80074,
            0.14177696, 0.26841971, 0.77970356, 0.073254474, 0.14701119, -0.98643976,
            -0.53611344, 0.36542255, 1.4076716, 1.7132663, 1.1706508, 0.27315611, -0.53956032,
            1.2225777, 1.3502609, 1.6148398, 1.8506432, 1.9184566, 1.9022882, 1.7468578,
            1.4350441, -0.12590128, 0.41304681, 0.76658881, 0.77603489, 0.43714285,
            -0.097969711, -0.58910322, -0.81581271 }, flat(state), 1e-5, "state")
        -- out, state = init_out.clone(), init_state.clone(); a trial goes on from a copy
        local s2 = state:clone()
        local o2 = model:forward(5, s2)
        assert_finite(o2:sum():item())
        assert.is_false(tide.equal(s2, state))
    end)

    it("sample_logits: the top_p cutoff, the zeroed probs, a draw from what is left", function()
        -- out = torch.arange(12.).sin() * 2
        local out = tide.arange(0., 12.):sin() * 2
        tide.manual_seed(0)
        local token, probs, cutoff = sample_logits(out, 1.0, 0.8)
        -- PyTorch/NumPy: np.argmax(cumulative_probs > 0.8) is 4 (0-based), the cutoff the 5th
        assert.is_true(ported.close(cutoff, 0.079959184, 1e-6))
        local kept = { 0, 0.18871185, 0.21612872, 0, 0, 0, 0, 0.13048425, 0.25366026,
            0.079959184, 0, 0 }
        local sum = 0
        for _, p in ipairs(kept) do sum = sum + p end
        for i = 1, #kept do kept[i] = kept[i] / sum end
        assert_close_list(kept, probs:tolist(), 1e-5, "probs")
        local support = { [2] = true, [3] = true, [8] = true, [9] = true, [10] = true }
        assert.is_true(support[token])
        for _ = 1, 5 do
            assert.is_true(support[(sample_logits(out, 0.7, 0.8))])
        end
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. lucidrains/minGRU-pytorch minGRU_pytorch/minGRU.py, minLM.py
---------------------------------------------------------------------------------------------
local function exists(v)
    return v ~= nil
end

local function default(v, d)
    if exists(v) then return v end
    return d
end

-- appendix B: https://github.com/glassroom/heinsen_sequence
local function heinsen_associative_scan_log(log_coeffs, log_values)
    -- a_star = log_coeffs.cumsum(dim = 1)
    local a_star = log_coeffs:cumsum({ dim = 2 })
    -- log_h0_plus_b_star = (log_values - a_star).logcumsumexp(dim = 1)
    local log_h0_plus_b_star = (log_values - a_star):logcumsumexp({ dim = 2 })
    local log_h = a_star + log_h0_plus_b_star
    return log_h:exp()
end

-- appendix B.3
local function g(x)
    -- return torch.where(x >= 0, x + 0.5, x.sigmoid())
    return tide.where(x:ge(0), x + 0.5, x:sigmoid())
end

local function log_g(x)
    -- return torch.where(x >= 0, (F.relu(x) + 0.5).log(), -F.softplus(-x))
    return tide.where(x:ge(0), (F.relu(x) + 0.5):log(), -F.softplus(-x))
end

-- log-space version of minGRU - B.3.1; they enforce the hidden states to be positive
local minGRU = nn.Module:extend("minGRU")
-- def __init__(self, dim, expansion_factor = 1., proj_out = None):
function minGRU:init(dim, expansion_factor, proj_out)
    expansion_factor = expansion_factor or 1.
    -- dim_inner = int(dim * expansion_factor)
    local dim_inner = math.floor(dim * expansion_factor)
    proj_out = default(proj_out, expansion_factor ~= 1.)

    self.to_hidden_and_gate = nn.Linear(dim, dim_inner * 2, { bias = false })
    self.to_out = proj_out and nn.Linear(dim_inner, dim, { bias = false }) or nn.Identity()
end

-- def forward(self, x, prev_hidden = None, return_next_prev_hidden = False):
function minGRU:forward(x, prev_hidden, return_next_prev_hidden)
    -- seq_len = x.shape[1]
    local seq_len = x.shape[2]
    -- hidden, gate = self.to_hidden_and_gate(x).chunk(2, dim = -1)
    local hidden, gate = unpack(self.to_hidden_and_gate(x):chunk(2, -1))
    local out
    if seq_len == 1 then
        -- handle sequential
        hidden = g(hidden)
        gate = gate:sigmoid()
        -- out = torch.lerp(prev_hidden, hidden, gate) if exists(prev_hidden) else (hidden * gate)
        if exists(prev_hidden) then
            out = tide.lerp(prev_hidden, hidden, gate)
        else
            out = hidden * gate
        end
    else
        -- parallel
        local log_coeffs = -F.softplus(gate)

        local log_z = -F.softplus(-gate)
        local log_tilde_h = log_g(hidden)
        local log_values = log_z + log_tilde_h

        if exists(prev_hidden) then
            -- log_values = torch.cat((prev_hidden.log(), log_values), dim = 1)
            log_values = tide.cat({ prev_hidden:log(), log_values }, 2)
            -- log_coeffs = F.pad(log_coeffs, (0, 0, 1, 0))
            log_coeffs = F.pad(log_coeffs, { 0, 0, 1, 0 })
        end

        out = heinsen_associative_scan_log(log_coeffs, log_values)
        -- out = out[:, -seq_len:]
        out = out[{ {}, { -seq_len, -1 } }]
    end

    -- next_prev_hidden = out[:, -1:]
    local next_prev_hidden = out[{ {}, { -1, -1 } }]

    out = self.to_out(out)

    if not return_next_prev_hidden then
        return out
    end

    return out, next_prev_hidden
end

-- minLM.py
-- def FeedForward(dim, mult = 4):
local function FeedForward(dim, mult)
    local dim_inner = math.floor(dim * (mult or 4))
    return nn.Sequential(
        nn.Linear(dim, dim_inner),
        nn.GELU(),
        nn.Linear(dim_inner, dim)
    )
end

-- class CausalDepthWiseConv1d(Module):
local CausalDepthWiseConv1d = nn.Module:extend("CausalDepthWiseConv1d")
function CausalDepthWiseConv1d:init(dim, kernel_size)
    self.kernel_size = kernel_size
    self.net = nn.Sequential(
        -- nn.Conv1d(dim, dim, kernel_size = kernel_size, groups = dim),
        nn.Conv1d(dim, dim, kernel_size, { groups = dim }),
        nn.Conv1d(dim, dim, 1)
    )
end

function CausalDepthWiseConv1d:forward(x)
    x = x:transpose(2, 3) -- b n d -> b d n
    -- x = F.pad(x, (self.kernel_size - 1, 0), value = 0.)
    x = F.pad(x, { self.kernel_size - 1, 0 }, { value = 0. })
    x = self.net(x)
    return x:transpose(2, 3) -- b d n -> b n d
end

-- class minLM(Module):
local minLM = nn.Module:extend("minLM")
-- def __init__(self, *, num_tokens, dim, depth, ff_mult = 4, expansion = 1.5,
--              conv_kernel_size = 3, use_lstm = False, enable_conv = False, dropout = 0.):
function minLM:init(o)
    local ff_mult, expansion = o.ff_mult or 4, o.expansion or 1.5
    local conv_kernel_size, dropout = o.conv_kernel_size or 3, o.dropout or 0.
    self.token_emb = nn.Embedding(o.num_tokens, o.dim)

    self.layers = nn.ModuleList({})

    -- min_rnn_klass = minGRU if not use_lstm else minLSTM
    -- minLSTM.py is outside this port (use_lstm = false only)
    assert(not o.use_lstm)
    local min_rnn_klass = minGRU

    for _ = 1, o.depth do
        -- None entries -> false: a Lua list keeps no nil
        self.layers:append(nn.ModuleList({
            o.enable_conv and CausalDepthWiseConv1d(o.dim, conv_kernel_size) or nn.Identity(),
            nn.RMSNorm(o.dim),
            min_rnn_klass(o.dim, expansion),
            nn.RMSNorm(o.dim),
            FeedForward(o.dim, ff_mult),
            dropout > 0. and nn.Dropout(dropout) or nn.Identity(),
        }))
    end

    self.norm = nn.RMSNorm(o.dim)
    self.to_logits = nn.Linear(o.dim, o.num_tokens, { bias = false })

    self.enable_conv = o.enable_conv or false
    self.can_cache = not o.enable_conv
end

-- def forward(self, x, return_loss = False, return_prev_hiddens = False, prev_hiddens = None):
function minLM:forward(x, return_loss, return_prev_hiddens, prev_hiddens)
    local labels
    if return_loss then
        -- x, labels = x[:, :-1], x[:, 1:]
        x, labels = x[{ {}, { 1, -2 } }], x[{ {}, { 2, -1 } }]
    end

    x = self.token_emb(x)

    -- handle previous hiddens, for recurrent decoding
    if exists(prev_hiddens) then
        x = x[{ {}, { -1, -1 } }]
    end

    local next_prev_hiddens = {}
    -- prev_hiddens = iter(default(prev_hiddens, []))
    prev_hiddens = default(prev_hiddens, {})

    -- for conv, norm, mingru, ff_norm, ff, dropout in self.layers:
    for li, layer in ipairs(self.layers) do
        local conv, norm, mingru, ff_norm, ff, dropout =
            layer[1], layer[2], layer[3], layer[4], layer[5], layer[6]
        -- conv
        if self.enable_conv then
            assert(#prev_hiddens == 0, 'caching not supported for conv version')
            x = conv(x) + x
        end

        -- min gru
        -- prev_hidden = next(prev_hiddens, None)
        local prev_hidden = prev_hiddens[li]

        local min_gru_out, next_prev_hidden = mingru(norm(x), prev_hidden, true)

        x = min_gru_out + x
        next_prev_hiddens[#next_prev_hiddens + 1] = next_prev_hidden

        -- feedforward
        x = ff(ff_norm(x)) + x

        -- dropout (nn.Identity when dropout is 0)
        x = dropout(x)
    end

    local embed = self.norm(x)
    local logits = self.to_logits(embed)

    if not return_loss then
        if not return_prev_hiddens then
            return logits
        end
        return logits, next_prev_hiddens
    end

    -- loss = F.cross_entropy(logits.transpose(1, 2), labels)
    local loss = F.cross_entropy(logits:transpose(2, 3), labels)

    return loss
end

describe("lucidrains/minGRU-pytorch minGRU.py and minLM.py", function()
    local function set_weights(m)
        tide.no_grad(function()
            -- m.to_hidden_and_gate.weight.copy_(fw(1, (12, 4)))
            m.to_hidden_and_gate.weight:copy_(fw(1, { 12, 4 }))
            m.to_out.weight:copy_(fw(2, { 4, 6 }))
        end)
    end

    it("minGRU: the parallel path matches PyTorch and the sequential path", function()
        local m = minGRU(4, 1.5)
        set_weights(m)
        -- x = fw(3, (2, 5, 4)) * 2
        local x = fw(3, { 2, 5, 4 }) * 2
        local out, nh = m(x, nil, true)
        assert.are.same({ 2, 5, 4 }, out.shape)
        assert.are.same({ 2, 1, 6 }, nh.shape)
        -- PyTorch 1.13, the same weights
        assert_close_list({
            -0.52578372, 0.40979671, 0.12396924, -0.53135127, -0.79396886, 0.68451881,
            0.12278364, -0.80491072, -0.89880317, 0.58694357, 0.32329249, -0.90393901,
            -0.96809471, 0.57041818, 0.40878752, -0.9712432, -0.81316531, 0.40475219,
            0.41629729, -0.81294084, -0.36453566, 0.29363653, 0.076618761, -0.36876288,
            -0.48121554, 0.46395543, 0.026297392, -0.48974064, -0.62777215, 0.58089876,
            0.058188468, -0.637954, -0.67479277, 0.76019186, -0.070591465, -0.69097537,
            -0.79291254, 0.80010772, 0.0083898101, -0.80833417 }, flat(out), 1e-5, "out")
        assert_close_list({ 0.66272557, 0.47127292, 0.67836803, 0.66369402, 0.70916891,
            0.87312764, 0.74599516, 0.99379373, 0.55720258, 0.86901599, 0.38837048,
            0.66257495 }, flat(nh), 1e-5, "next hidden")
        -- the sequential path, one step at a time with the hidden carried along
        local h, outs = nil, {}
        for t = 1, 5 do
            local o
            o, h = m(x[{ {}, { t, t } }], h, true)
            outs[t] = o
        end
        assert.is_true(tide.allclose(tide.cat(outs, 2), out, { atol = 1e-5 }))
        assert.is_true(tide.allclose(h, nh, { atol = 1e-5 }))
        -- a prev_hidden on the parallel path: log(h0) heads the scan, F.pad the coefficients
        local h0 = fw(4, { 2, 1, 6 }):abs() + 0.1
        local out2, nh2 = m(x, h0, true)
        assert_close_list({ -0.82356274, 0.40903211, 0.4224982, -0.82330084 },
            out2[1][5]:tolist(), 1e-5, "out with h0")
        assert_close_list({ 0.67905736, 0.47956964, 0.6842221, 0.67268765, 0.72407174,
            0.8898651, 0.75581563, 0.99943608, 0.56707084, 0.88642609, 0.39521968,
            0.66742891 }, flat(nh2), 1e-5, "next hidden with h0")
        -- split: the parallel path over the first 3, then the last 2 from its hidden
        local _, ha = m(x[{ {}, { 1, 3 } }], nil, true)
        local ob = m(x[{ {}, { 4, 5 } }], ha)
        assert.is_true(tide.allclose(ob, out[{ {}, { 4, 5 } }], { atol = 1e-5 }))
    end)

    it("minLM (with the causal conv) trains with Adam; decoding with prev_hiddens", function()
        tide.manual_seed(0)
        local model = minLM({ num_tokens = 16, dim = 8, depth = 2, ff_mult = 2,
            enable_conv = true })
        local opt = optim.Adam(model:parameters(), 1e-2)
        local seq = tide.randint(1, 17, { 2, 9 })
        local losses = {}
        for step = 1, 3 do
            local loss = model(seq, true)
            opt:zero_grad()
            loss:backward()
            opt:step()
            losses[step] = loss:item()
            assert_finite(losses[step], "loss")
        end
        assert.is_true(losses[3] < losses[1])
        -- without the conv the model caches: a last token from prev_hiddens matches the full run
        local lm = minLM({ num_tokens = 16, dim = 8, depth = 2, ff_mult = 2 })
        assert.is_true(lm.can_cache)
        local full = lm(seq)
        local _, hiddens = lm(seq[{ {}, { 1, 8 } }], false, true)
        assert.are.equal(2, #hiddens)
        local last = lm(seq, false, false, hiddens)
        assert.are.same({ 2, 1, 16 }, last.shape)
        assert.is_true(tide.allclose(last, full[{ {}, { 9, 9 } }], { atol = 1e-5 }))
    end)
end)
