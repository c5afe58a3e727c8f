-- ported_scripts140_spec.lua — thuml/Autoformer's layers/AutoCorrelation.py (AutoCorrelation:
-- time_delay_agg_training / _inference / _full, the rfft / irfft correlation with the L > S
-- padding and truncation; AutoCorrelationLayer) and layers/Autoformer_EncDec.py (my_Layernorm,
-- moving_avg, series_decomp, EncoderLayer), and zhouhaoyi/Informer2020's models/attn.py
-- (ProbAttention: _prob_QK, _get_initial_context, _update_context, forward; AttentionLayer) with
-- utils/masking.py's ProbMask, ported line for line at tiny sizes (batch 2, length 8, d_model 8,
-- heads 2) on deterministic inputs and weights. The Python line stands above each Lua line that
-- differs from it. Dims and indices are 1-based: topk's delays and gather's indices are 1-based,
-- so a 0-based torch.arange plus a 1-based delay is already gather's 1-based index.
-- Reference values: PyTorch 1.13 running the same sources (ProbAttention's torch.randint sample
-- replaced by a fixed index_sample, the same on both sides, 1-based here).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- def det(shape, k): (torch.sin(torch.arange(n) * 0.37 + k) * 0.2).reshape(shape)
local function det(shape, k)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    return (tide.sin(tide.arange(0, n) * 0.37 + k) * 0.2):reshape(shape)
end

-- the Python check's init: named_parameters()'s i-th parameter (0-based) gets det(shape, k0 + i)
local function init(params, k0)
    tide.no_grad(function()
        for i, p in ipairs(params) do
            p:copy_(det(p.shape, k0 + i - 1))
        end
    end)
end

-- every step-th element of t flattened (step = max(1, numel // 16)), its sum and sum of squares
local function check(t, want, what)
    local flat = t:detach():reshape(-1)
    local n = flat:numel()
    local step = math.max(1, math.floor(n / 16))
    local got = {}
    for i = 1, n, step do got[#got + 1] = flat[i]:item() end
    assert_close_list(want[1], got, 1e-4, what)
    assert_close_list({ want[2], want[3] }, { flat:sum():item(), (flat * flat):sum():item() },
        1e-4, what .. " sum, sum of squares")
end

local function rep(t, ...)
    return t["repeat"](t, ...)
end

---------------------------------------------------------------------------------------------
-- 1. thuml/Autoformer layers/AutoCorrelation.py
---------------------------------------------------------------------------------------------
-- class AutoCorrelation(nn.Module):
local AutoCorrelation = nn.Module:extend("AutoCorrelation")
-- def __init__(self, mask_flag=True, factor=1, scale=None, attention_dropout=0.1,
--              output_attention=False):
function AutoCorrelation:init(mask_flag, factor, scale, attention_dropout, output_attention)
    if mask_flag == nil then mask_flag = true end
    self.factor = factor or 1
    self.scale = scale
    self.mask_flag = mask_flag
    self.output_attention = output_attention or false
    self.dropout = nn.Dropout(attention_dropout or 0.1)
end

function AutoCorrelation:time_delay_agg_training(values, corr)
    -- head = values.shape[1]
    local head = values.shape[2]
    local channel = values.shape[3]
    local length = values.shape[4]
    -- find top k
    -- top_k = int(self.factor * math.log(length))
    local top_k = math.floor(self.factor * math.log(length))
    -- mean_value = torch.mean(torch.mean(corr, dim=1), dim=1)
    local mean_value = tide.mean(tide.mean(corr, 2), 2)
    -- index = torch.topk(torch.mean(mean_value, dim=0), top_k, dim=-1)[1]
    local _, index = tide.topk(tide.mean(mean_value, 1), top_k, { dim = -1 })
    -- weights = torch.stack([mean_value[:, index[i]] for i in range(top_k)], dim=-1)
    local cols = {}
    for i = 1, top_k do cols[i] = mean_value[{ {}, index[i]:item() }] end
    local weights = tide.stack(cols, -1)
    -- update corr
    -- tmp_corr = torch.softmax(weights, dim=-1)
    local tmp_corr = tide.softmax(weights, -1)
    -- aggregation
    local tmp_values = values
    -- delays_agg = torch.zeros_like(values).float()
    local delays_agg = tide.zeros_like(values):float()
    for i = 1, top_k do
        -- pattern = torch.roll(tmp_values, -int(index[i]), -1)
        -- (index[i] 1-based: the delay is index[i] - 1)
        local pattern = tide.roll(tmp_values, -(index[i]:item() - 1), -1)
        -- delays_agg = delays_agg + pattern * \
        --     (tmp_corr[:, i].unsqueeze(1).unsqueeze(1).unsqueeze(1).repeat(1, head, channel, length))
        delays_agg = delays_agg + pattern
            * rep(tmp_corr[{ {}, i }]:unsqueeze(2):unsqueeze(2):unsqueeze(2),
                1, head, channel, length)
    end
    return delays_agg
end

function AutoCorrelation:time_delay_agg_inference(values, corr)
    local batch, head, channel, length = unpack(values:size())
    -- index init
    -- init_index = torch.arange(length).unsqueeze(0).unsqueeze(0).unsqueeze(0)\
    --     .repeat(batch, head, channel, 1).to(values.device)
    local init_index = rep(tide.arange(length):unsqueeze(1):unsqueeze(1):unsqueeze(1),
        batch, head, channel, 1):to(values.device)
    -- find top k
    -- top_k = int(self.factor * math.log(length))
    local top_k = math.floor(self.factor * math.log(length))
    -- mean_value = torch.mean(torch.mean(corr, dim=1), dim=1)
    local mean_value = tide.mean(tide.mean(corr, 2), 2)
    -- weights, delay = torch.topk(mean_value, top_k, dim=-1)
    local weights, delay = tide.topk(mean_value, top_k, { dim = -1 })
    -- update corr
    -- tmp_corr = torch.softmax(weights, dim=-1)
    local tmp_corr = tide.softmax(weights, -1)
    -- aggregation
    -- tmp_values = values.repeat(1, 1, 1, 2)
    local tmp_values = rep(values, 1, 1, 1, 2)
    local delays_agg = tide.zeros_like(values):float()
    for i = 1, top_k do
        -- tmp_delay = init_index + delay[:, i].unsqueeze(1).unsqueeze(1).unsqueeze(1).repeat(1, head, channel, length)
        local tmp_delay = init_index
            + rep(delay[{ {}, i }]:unsqueeze(2):unsqueeze(2):unsqueeze(2), 1, head, channel, length)
        -- pattern = torch.gather(tmp_values, dim=-1, index=tmp_delay)
        local pattern = tide.gather(tmp_values, -1, tmp_delay)
        delays_agg = delays_agg + pattern
            * rep(tmp_corr[{ {}, i }]:unsqueeze(2):unsqueeze(2):unsqueeze(2),
                1, head, channel, length)
    end
    return delays_agg
end

function AutoCorrelation:time_delay_agg_full(values, corr)
    local batch, head, channel, length = unpack(values:size())
    local init_index = rep(tide.arange(length):unsqueeze(1):unsqueeze(1):unsqueeze(1),
        batch, head, channel, 1):to(values.device)
    local top_k = math.floor(self.factor * math.log(length))
    -- weights, delay = torch.topk(corr, top_k, dim=-1)
    local weights, delay = tide.topk(corr, top_k, { dim = -1 })
    local tmp_corr = tide.softmax(weights, -1)
    local tmp_values = rep(values, 1, 1, 1, 2)
    local delays_agg = tide.zeros_like(values):float()
    for i = 1, top_k do
        -- tmp_delay = init_index + delay[..., i].unsqueeze(-1)
        local tmp_delay = init_index + delay[{ "...", i }]:unsqueeze(-1)
        local pattern = tide.gather(tmp_values, -1, tmp_delay)
        -- delays_agg = delays_agg + pattern * (tmp_corr[..., i].unsqueeze(-1))
        delays_agg = delays_agg + pattern * tmp_corr[{ "...", i }]:unsqueeze(-1)
    end
    return delays_agg
end

function AutoCorrelation:forward(queries, keys, values, attn_mask) -- luacheck: ignore attn_mask
    -- B, L, H, E = queries.shape
    local L = queries.shape[2]
    -- _, S, _, D = values.shape
    local S = values.shape[2]
    if L > S then
        -- zeros = torch.zeros_like(queries[:, :(L - S), :]).float()
        local zeros = tide.zeros_like(queries[{ {}, { 1, L - S }, {} }]):float()
        -- values = torch.cat([values, zeros], dim=1)
        values = tide.cat({ values, zeros }, 2)
        keys = tide.cat({ keys, zeros }, 2)
    else
        -- values = values[:, :L, :, :]
        values = values[{ {}, { 1, L }, {}, {} }]
        keys = keys[{ {}, { 1, L }, {}, {} }]
    end

    -- period-based dependencies
    -- q_fft = torch.fft.rfft(queries.permute(0, 2, 3, 1).contiguous(), dim=-1)
    local q_fft = tide.fft.rfft(queries:permute(1, 3, 4, 2):contiguous(), { dim = -1 })
    local k_fft = tide.fft.rfft(keys:permute(1, 3, 4, 2):contiguous(), { dim = -1 })
    -- res = q_fft * torch.conj(k_fft)
    local res = q_fft * tide.conj(k_fft)
    -- corr = torch.fft.irfft(res, n=L, dim=-1)
    local corr = tide.fft.irfft(res, { n = L, dim = -1 })

    -- time delay agg
    local V
    if self.training then
        -- V = self.time_delay_agg_training(values.permute(0, 2, 3, 1).contiguous(), corr).permute(0, 3, 1, 2)
        V = self:time_delay_agg_training(values:permute(1, 3, 4, 2):contiguous(), corr)
            :permute(1, 4, 2, 3)
    else
        V = self:time_delay_agg_inference(values:permute(1, 3, 4, 2):contiguous(), corr)
            :permute(1, 4, 2, 3)
    end

    if self.output_attention then
        -- return (V.contiguous(), corr.permute(0, 3, 1, 2))
        return V:contiguous(), corr:permute(1, 4, 2, 3)
    else
        return V:contiguous(), nil
    end
end

-- class AutoCorrelationLayer(nn.Module):
local AutoCorrelationLayer = nn.Module:extend("AutoCorrelationLayer")
function AutoCorrelationLayer:init(correlation, d_model, n_heads, d_keys, d_values)
    -- d_keys = d_keys or (d_model // n_heads)
    d_keys = d_keys or math.floor(d_model / n_heads)
    d_values = d_values or math.floor(d_model / n_heads)

    self.inner_correlation = correlation
    self.query_projection = nn.Linear(d_model, d_keys * n_heads)
    self.key_projection = nn.Linear(d_model, d_keys * n_heads)
    self.value_projection = nn.Linear(d_model, d_values * n_heads)
    self.out_projection = nn.Linear(d_values * n_heads, d_model)
    self.n_heads = n_heads
end

function AutoCorrelationLayer:forward(queries, keys, values, attn_mask)
    -- B, L, _ = queries.shape
    local B, L = queries.shape[1], queries.shape[2]
    local S = keys.shape[2]
    local H = self.n_heads

    queries = self.query_projection(queries):view(B, L, H, -1)
    keys = self.key_projection(keys):view(B, S, H, -1)
    values = self.value_projection(values):view(B, S, H, -1)

    local out, attn = self.inner_correlation(queries, keys, values, attn_mask)
    out = out:view(B, L, -1)

    return self.out_projection(out), attn
end

-- named_parameters()'s order
local function layer_params(l)
    return { l.query_projection.weight, l.query_projection.bias, l.key_projection.weight,
        l.key_projection.bias, l.value_projection.weight, l.value_projection.bias,
        l.out_projection.weight, l.out_projection.bias }
end

---------------------------------------------------------------------------------------------
-- 2. thuml/Autoformer layers/Autoformer_EncDec.py
---------------------------------------------------------------------------------------------
-- class my_Layernorm(nn.Module):
local my_Layernorm = nn.Module:extend("my_Layernorm")
function my_Layernorm:init(channels)
    self.layernorm = nn.LayerNorm(channels)
end

function my_Layernorm:forward(x)
    local x_hat = self.layernorm(x)
    -- bias = torch.mean(x_hat, dim=1).unsqueeze(1).repeat(1, x.shape[1], 1)
    local bias = rep(tide.mean(x_hat, 2):unsqueeze(2), 1, x.shape[2], 1)
    return x_hat - bias
end

-- class moving_avg(nn.Module):
local moving_avg = nn.Module:extend("moving_avg")
function moving_avg:init(kernel_size, stride)
    self.kernel_size = kernel_size
    -- self.avg = nn.AvgPool1d(kernel_size=kernel_size, stride=stride, padding=0)
    self.avg = nn.AvgPool1d(kernel_size, stride, 0)
end

function moving_avg:forward(x)
    -- padding on the both ends of time series
    -- front = x[:, 0:1, :].repeat(1, math.floor((self.kernel_size - 1) / 2), 1)
    local front = rep(x[{ {}, { 1, 1 }, {} }], 1, math.floor((self.kernel_size - 1) / 2), 1)
    -- end = x[:, -1:, :].repeat(1, math.floor((self.kernel_size - 1) / 2), 1)
    local end_ = rep(x[{ {}, { -1, -1 }, {} }], 1, math.floor((self.kernel_size - 1) / 2), 1)
    -- x = torch.cat([front, x, end], dim=1)
    x = tide.cat({ front, x, end_ }, 2)
    -- x = self.avg(x.permute(0, 2, 1))
    x = self.avg(x:permute(1, 3, 2))
    x = x:permute(1, 3, 2)
    return x
end

-- class series_decomp(nn.Module):
local series_decomp = nn.Module:extend("series_decomp")
function series_decomp:init(kernel_size)
    self.moving_avg = moving_avg(kernel_size, 1)
end

function series_decomp:forward(x)
    local moving_mean = self.moving_avg(x)
    local res = x - moving_mean
    return res, moving_mean
end

-- class EncoderLayer(nn.Module):
local EncoderLayer = nn.Module:extend("EncoderLayer")
-- def __init__(self, attention, d_model, d_ff=None, moving_avg=25, dropout=0.1, activation="relu"):
function EncoderLayer:init(attention, d_model, d_ff, moving_avg_, dropout, activation)
    d_ff = d_ff or 4 * d_model
    self.attention = attention
    -- self.conv1 = nn.Conv1d(in_channels=d_model, out_channels=d_ff, kernel_size=1, bias=False)
    self.conv1 = nn.Conv1d({ in_channels = d_model, out_channels = d_ff, kernel_size = 1,
        bias = false })
    self.conv2 = nn.Conv1d({ in_channels = d_ff, out_channels = d_model, kernel_size = 1,
        bias = false })
    self.decomp1 = series_decomp(moving_avg_ or 25)
    self.decomp2 = series_decomp(moving_avg_ or 25)
    self.dropout = nn.Dropout(dropout or 0.1)
    -- self.activation = F.relu if activation == "relu" else F.gelu
    self.activation = (activation or "relu") == "relu" and F.relu or F.gelu
end

function EncoderLayer:forward(x, attn_mask)
    -- new_x, attn = self.attention(x, x, x, attn_mask=attn_mask)
    local new_x, attn = self.attention(x, x, x, attn_mask)
    x = x + self.dropout(new_x)
    -- x, _ = self.decomp1(x)
    x = self.decomp1(x)
    local y = x
    -- y = self.dropout(self.activation(self.conv1(y.transpose(-1, 1))))
    y = self.dropout(self.activation(self.conv1(y:transpose(-1, 2))))
    y = self.dropout(self.conv2(y):transpose(-1, 2))
    -- res, _ = self.decomp2(x + y)
    local res = self.decomp2(x + y)
    return res, attn
end

---------------------------------------------------------------------------------------------
-- 3. zhouhaoyi/Informer2020 utils/masking.py and models/attn.py
---------------------------------------------------------------------------------------------
-- class ProbMask():
local function ProbMask(B, H, L, index, scores, device)
    -- _mask = torch.ones(L, scores.shape[-1], dtype=torch.bool).to(device).triu(1)
    local _mask = tide.ones({ L, scores.shape[#scores.shape] }, { dtype = "bool" }):to(device)
        :triu(1)
    -- _mask_ex = _mask[None, None, :].expand(B, H, L, scores.shape[-1])
    local _mask_ex = _mask[{ tide.newaxis, tide.newaxis, {} }]
        :expand(B, H, L, scores.shape[#scores.shape])
    -- indicator = _mask_ex[torch.arange(B)[:, None, None], torch.arange(H)[None, :, None], index, :]
    local indicator = _mask_ex[{ tide.arange(1, B + 1):view(B, 1, 1),
        tide.arange(1, H + 1):view(1, H, 1), index, {} }]:to(device)
    -- self._mask = indicator.view(scores.shape).to(device)
    return { mask = indicator:view(scores.shape):to(device) }
end

-- class ProbAttention(nn.Module):
local ProbAttention = nn.Module:extend("ProbAttention")
-- def __init__(self, mask_flag=True, factor=5, scale=None, attention_dropout=0.1,
--              output_attention=False):
function ProbAttention:init(mask_flag, factor, scale, attention_dropout, output_attention)
    if mask_flag == nil then mask_flag = true end
    self.factor = factor or 5
    self.scale = scale
    self.mask_flag = mask_flag
    self.output_attention = output_attention or false
    self.dropout = nn.Dropout(attention_dropout or 0.1)
end

function ProbAttention:_prob_QK(Q, K, sample_k, n_top) -- n_top: c*ln(L_q)
    -- Q [B, H, L, D]
    local B, H, L_K, E = unpack(K:size())
    local L_Q = Q.shape[3]

    -- calculate the sampled Q_K
    -- K_expand = K.unsqueeze(-3).expand(B, H, L_Q, L_K, E)
    local K_expand = K:unsqueeze(-3):expand(B, H, L_Q, L_K, E)
    -- index_sample = torch.randint(L_K, (L_Q, sample_k)) # real U = U_part(factor*ln(L_k))*L_q
    -- (fixed_index_sample, when set, stands for the draw: the check compares values)
    local index_sample = self.fixed_index_sample
        or tide.randint(1, L_K + 1, { L_Q, sample_k })
    -- K_sample = K_expand[:, :, torch.arange(L_Q).unsqueeze(1), index_sample, :]
    local K_sample = K_expand[{ {}, {}, tide.arange(1, L_Q + 1):unsqueeze(2), index_sample, {} }]
    -- Q_K_sample = torch.matmul(Q.unsqueeze(-2), K_sample.transpose(-2, -1)).squeeze(-2)
    local Q_K_sample = tide.matmul(Q:unsqueeze(-2), K_sample:transpose(-2, -1)):squeeze(-2)

    -- find the Top_k query with sparisty measurement
    -- M = Q_K_sample.max(-1)[0] - torch.div(Q_K_sample.sum(-1), L_K)
    local M = Q_K_sample:max(-1) - tide.div(Q_K_sample:sum(-1), L_K)
    -- M_top = M.topk(n_top, sorted=False)[1]
    local _, M_top = M:topk(n_top, { sorted = false })

    -- use the reduced Q to calculate Q_K
    -- Q_reduce = Q[torch.arange(B)[:, None, None], torch.arange(H)[None, :, None], M_top, :]
    local Q_reduce = Q[{ tide.arange(1, B + 1):view(B, 1, 1), tide.arange(1, H + 1):view(1, H, 1),
        M_top, {} }] -- factor*ln(L_q)
    -- Q_K = torch.matmul(Q_reduce, K.transpose(-2, -1)) # factor*ln(L_q)*L_k
    local Q_K = tide.matmul(Q_reduce, K:transpose(-2, -1))

    return Q_K, M_top
end

function ProbAttention:_get_initial_context(V, L_Q)
    local B, H, L_V = unpack(V:size())
    local contex
    if not self.mask_flag then
        -- V_sum = V.mean(dim=-2)
        local V_sum = V:mean(-2)
        -- contex = V_sum.unsqueeze(-2).expand(B, H, L_Q, V_sum.shape[-1]).clone()
        contex = V_sum:unsqueeze(-2):expand(B, H, L_Q, V_sum.shape[3]):clone()
    else -- use mask
        assert(L_Q == L_V) -- requires that L_Q == L_V, i.e. for self-attention only
        -- contex = V.cumsum(dim=-2)
        contex = V:cumsum(-2)
    end
    return contex
end

function ProbAttention:_update_context(context_in, V, scores, index,
                                       L_Q, attn_mask) -- luacheck: ignore L_Q
    local B, H, L_V = unpack(V:size())

    if self.mask_flag then
        -- attn_mask = ProbMask(B, H, L_Q, index, scores, device=V.device)
        attn_mask = ProbMask(B, H, L_Q, index, scores, V.device)
        -- scores.masked_fill_(attn_mask.mask, -np.inf)
        scores:masked_fill_(attn_mask.mask, -math.huge)
    end

    local attn = tide.softmax(scores, -1) -- nn.Softmax(dim=-1)(scores)

    local bi, hi = tide.arange(1, B + 1):view(B, 1, 1), tide.arange(1, H + 1):view(1, H, 1)
    -- context_in[torch.arange(B)[:, None, None], torch.arange(H)[None, :, None], index, :] =
    --     torch.matmul(attn, V).type_as(context_in)
    context_in[{ bi, hi, index, {} }] = tide.matmul(attn, V):type_as(context_in)
    if self.output_attention then
        -- attns = (torch.ones([B, H, L_V, L_V])/L_V).type_as(attn).to(attn.device)
        local attns = (tide.ones({ B, H, L_V, L_V }) / L_V):type_as(attn):to(attn.device)
        attns[{ bi, hi, index, {} }] = attn
        return context_in, attns
    else
        return context_in, nil
    end
end

function ProbAttention:forward(queries, keys, values, attn_mask)
    -- B, L_Q, H, D = queries.shape
    local L_Q, D = queries.shape[2], queries.shape[4]
    local L_K = keys.shape[2]

    -- queries = queries.transpose(2,1)
    queries = queries:transpose(3, 2)
    keys = keys:transpose(3, 2)
    values = values:transpose(3, 2)

    -- U_part = self.factor * np.ceil(np.log(L_K)).astype('int').item() # c*ln(L_k)
    local U_part = self.factor * math.ceil(math.log(L_K))
    local u = self.factor * math.ceil(math.log(L_Q)) -- c*ln(L_q)

    -- U_part = U_part if U_part<L_K else L_K
    U_part = U_part < L_K and U_part or L_K
    u = u < L_Q and u or L_Q

    local scores_top, index = self:_prob_QK(queries, keys, U_part, u)

    -- add scale factor
    -- scale = self.scale or 1./sqrt(D)
    local scale = self.scale or 1 / math.sqrt(D)
    if scale ~= nil then
        scores_top = scores_top * scale
    end
    -- get the context
    local context = self:_get_initial_context(values, L_Q)
    -- update the context with selected top_k queries
    local attn
    context, attn = self:_update_context(context, values, scores_top, index, L_Q, attn_mask)

    -- return context.transpose(2,1).contiguous(), attn
    return context:transpose(3, 2):contiguous(), attn
end

-- class AttentionLayer(nn.Module):
local AttentionLayer = nn.Module:extend("AttentionLayer")
function AttentionLayer:init(attention, d_model, n_heads, d_keys, d_values, mix)
    -- d_keys = d_keys or (d_model//n_heads)
    d_keys = d_keys or math.floor(d_model / n_heads)
    d_values = d_values or math.floor(d_model / n_heads)

    self.inner_attention = attention
    self.query_projection = nn.Linear(d_model, d_keys * n_heads)
    self.key_projection = nn.Linear(d_model, d_keys * n_heads)
    self.value_projection = nn.Linear(d_model, d_values * n_heads)
    self.out_projection = nn.Linear(d_values * n_heads, d_model)
    self.n_heads = n_heads
    self.mix = mix or false
end

function AttentionLayer:forward(queries, keys, values, attn_mask)
    local B, L = queries.shape[1], queries.shape[2]
    local S = keys.shape[2]
    local H = self.n_heads

    queries = self.query_projection(queries):view(B, L, H, -1)
    keys = self.key_projection(keys):view(B, S, H, -1)
    values = self.value_projection(values):view(B, S, H, -1)

    local out, attn = self.inner_attention(queries, keys, values, attn_mask)
    if self.mix then
        -- out = out.transpose(2,1).contiguous()
        out = out:transpose(3, 2):contiguous()
    end
    out = out:view(B, L, -1)

    return self.out_projection(out), attn
end
-- PyTorch 1.13: every step-th element, the sum, the sum of squares
local WANT = {
    train = {
        { -0.0515057, 0.0163961, 0.0192528, -0.0542685, 0.0874996, -0.1178533, 0.1443313,
          -0.1660629, 0.1823025, -0.1925914, 0.1965469, -0.1940387, 0.1851497, -0.1701718,
          0.1495977, -0.1241042 },
        0.6428366303443909, 2.199094295501709 },
    infer = {
        { 0.1819257, -0.1654803, 0.1435931, -0.1169838, 0.0865274, -0.0532255, 0.0181733,
          0.0174765, 0.1823025, -0.1925914, 0.1965469, -0.1940387, 0.1851497, -0.1701718,
          0.1495977, -0.1241042 },
        0.6428366899490356, 2.1991066932678223 },
    full = {
        { 0.1806758, 0.0192261, 0.1428334, -0.0497244, 0.0877121, -0.1130965, 0.0888682,
          -0.1626679, 0.180009, -0.1201549, 0.0100927, -0.1211764, -0.1684429, -0.1221928,
          -0.1934539, -0.1232036 },
        0.6428368091583252, 2.20369029045105 },
    layer_train = {
        { -0.1050365, 0.039184, -0.1009281, 0.0418726, -0.1073122, 0.0512848, -0.1115088,
          0.050128, -0.0095033, -0.0105626, -0.0362065, 0.0203092, -0.0672558, -0.0059473,
          -0.0389832, -0.0353063 },
        -17.170318603515625, 5.625268459320068 },
    layer_eval = {
        { 0.0509383, -0.1115288, 0.0505137, -0.1057753, 0.0401782, -0.1008708, 0.0408392,
          -0.1066107, -0.0095033, -0.0105626, -0.0362065, 0.0203092, -0.0672558, -0.0059473,
          -0.0389832, -0.0353063 },
        -17.170318603515625, 5.625206470489502 },
    layer_pad = {
        { -0.0007328, -0.072074, -0.0338842, -0.0958036, -0.0820581, -0.0784274, -0.0298211,
          -0.0444225, 0.0437324, -0.1084854, 0.0517328, -0.1112169, -0.0233074, -0.1092467,
          -0.0397295, -0.1069108 },
        -16.99671745300293, 4.4090046882629395 },
    layer_trunc = {
        { -0.0784172, 0.0086111, -0.0948985, 0.0254152, -0.073034, 0.0003131, -0.0455199,
          -0.0287083, 0.0298974, -0.0985039, 0.0459331, -0.1097898, 0.052098, -0.110631,
          0.0398811, -0.1012453 },
        -17.139423370361328, 5.3909735679626465 },
    seasonal = {
        { 0.3890062, -0.6744519, 0.4579438, -0.2263761, -0.0126364, 0.2512333, -0.4815675,
          0.2968485, -0.4884568, 1.0500907, -1.1779745, 1.2671196, -1.3145955, 1.3188409,
          -1.2797157, 0.6246914 },
        1.1920928955078125e-07, 90.84703063964844 },
    trend = {
        { 0.2679804, 0.1644198, -0.1116389, 0.0551866, 0.0030808, -0.0612459, 0.1173979,
          0.2295275, -0.1828171, -0.2559941, 0.2871697, -0.3089024, 0.3204758, -0.3215109,
          0.3119726, 0.2816397 },
        4.298096179962158, 6.875185966491699 },
    seasonal5 = {
        { 0.2955401, -0.7058434, 0.2838021, -0.1402925, -0.0078312, 0.1556977, -0.5379725,
          0.2453868, -0.2491679, 0.8903044, -0.7300279, 0.7852734, -0.8146956, 0.8173268,
          -1.1373689, 0.3566151 },
        -2.6609034538269043, 47.48232650756836 },
    trend5 = {
        { 0.3614465, 0.1958113, 0.0625029, -0.030897, -0.0017245, 0.0342897, 0.1738028,
          0.2809892, -0.4221061, -0.0962078, -0.1607769, 0.1729438, -0.1794241, 0.1800031,
          0.1696258, 0.549716 },
        6.959000110626221, 7.474529266357422 },
    mylayernorm = {
        { 0.003075, -0.0647703, 0.2655021, -0.3339462, 0.4341927, -0.3789172, 0.4140967,
          -0.3392329, 0.331703, -0.3368406, 0.2906806, -0.2956386, 0.2476409, -0.2485566,
          0.1934052, -0.1823939 },
        -1.1920928955078125e-07, 3.3136239051818848 },
    prob_False = {
        { 0.058196, 0.058196, 0.058196, 0.058196, -0.1647866, 0.3483985, 0.058196, 0.4605633,
          0.0661271, 0.6249381, -0.5238308, 0.6040509, 0.0661271, 0.0661271, 0.0661271,
          0.0661271 },
        4.205683708190918, 6.020066261291504 },
    problayer_False = {
        { 0.0730766, 0.0688118, 0.0718926, 0.0705, 0.0705, 0.0260414, 0.1145161, 0.0158473,
          0.0882036, 0.0758492, 0.0831643, 0.0831643, 0.0799171, 0.0896342, 0.0755735, 0.0831643
          },
        -17.43680191040039, 5.278491020202637 },
    prob_True = {
        { 0.9906074, 0.0409827, 0.9183964, 0.1420474, -0.2441084, 0.4603974, 0.6273362,
          0.4605633, -0.0191104, 0.1663901, -0.2066552, 0.3227651, -0.3366536, 0.4632145,
          -0.4318899, 0.5290169 },
        24.78375244140625, 30.950803756713867 },
    problayer_True = {
        { 0.1208795, 0.0993939, 0.2896098, 0.2746071, 0.4570401, 0.0775948, 0.2335623,
          0.1036311, 0.1873316, 0.1080326, 0.330638, 0.3290013, 0.0896686, 0.4177651, 0.4541428,
          0.6777059 },
        -18.787538528442383, 38.56379699707031 },
    losses = { 1.626072645187378, 1.3235331773757935, 1.0736937522888184 },
}

-- x = det((2, 8, 8), 7) * 5, the series every check feeds
local function series()
    return det({ 2, 8, 8 }, 7) * 5
end

describe("ported thuml/Autoformer AutoCorrelation", function()
    it("time_delay_agg_training / _inference / _full match PyTorch", function()
        local ac = AutoCorrelation(true, 1)
        local values = det({ 2, 2, 4, 8 }, 1)
        -- corr = det((2, 2, 4, 8), 2) * 5 * torch.tensor([1.0, -1.0]).view(2, 1, 1, 1)
        local corr = det({ 2, 2, 4, 8 }, 2) * 5 * tide.tensor({ 1.0, -1.0 }):view(2, 1, 1, 1)
        local train = ac:time_delay_agg_training(values, corr)
        assert.same({ 2, 2, 4, 8 }, train:size())
        check(train, WANT.train, "time_delay_agg_training")
        check(ac:time_delay_agg_inference(values, corr), WANT.infer, "time_delay_agg_inference")
        check(ac:time_delay_agg_full(values, corr), WANT.full, "time_delay_agg_full")
    end)

    it("AutoCorrelationLayer matches PyTorch in train and eval, padded and truncated", function()
        local layer = AutoCorrelationLayer(AutoCorrelation(true, 1, nil, 0.0), 8, 2)
        init(layer_params(layer), 3)
        local x = series()
        local out, attn = layer(x, x, x, nil)
        assert.same({ 2, 8, 8 }, out:size())
        assert.is_nil(attn)
        check(out, WANT.layer_train, "AutoCorrelationLayer train")
        layer:eval()
        check(layer(x, x, x, nil), WANT.layer_eval, "AutoCorrelationLayer eval")
        -- L > S: keys and values zero-padded to L; L < S: truncated to L
        local kv6, kv10 = det({ 2, 6, 8 }, 8) * 5, det({ 2, 10, 8 }, 9) * 5
        check(layer(x, kv6, kv6, nil), WANT.layer_pad, "AutoCorrelationLayer L > S")
        check(layer(x, kv10, kv10, nil), WANT.layer_trunc, "AutoCorrelationLayer L < S")
    end)
end)

describe("ported thuml/Autoformer Autoformer_EncDec", function()
    it("series_decomp's seasonal and trend parts and my_Layernorm match PyTorch", function()
        local x = series()
        local s, t = series_decomp(3)(x)
        assert.same({ 2, 8, 8 }, t:size())
        check(s, WANT.seasonal, "seasonal (kernel 3)")
        check(t, WANT.trend, "trend (kernel 3)")
        s, t = series_decomp(5)(x)
        check(s, WANT.seasonal5, "seasonal (kernel 5)")
        check(t, WANT.trend5, "trend (kernel 5)")
        local ln = my_Layernorm(8)
        init({ ln.layernorm.weight, ln.layernorm.bias }, 11)
        check(ln(x), WANT.mylayernorm, "my_Layernorm")
    end)

    it("2 Adam steps of an EncoderLayer with AutoCorrelationLayer: PyTorch's losses, falling",
        function()
            -- enc = EncoderLayer(AutoCorrelationLayer(AutoCorrelation(False, 1, attention_dropout=0.0),
            --     8, 2), 8, d_ff=16, moving_avg=3, dropout=0.0)
            local enc = EncoderLayer(
                AutoCorrelationLayer(AutoCorrelation(false, 1, nil, 0.0), 8, 2), 8, 16, 3, 0.0)
            local params = layer_params(enc.attention)
            params[#params + 1] = enc.conv1.weight
            params[#params + 1] = enc.conv2.weight
            init(params, 20)
            local opt = optim.Adam(enc:parameters(), { lr = 0.01 })
            local x = series()
            local target = det({ 2, 8, 8 }, 30) * 3
            local losses = {}
            for step = 1, 3 do
                local out = enc(x)
                local loss = F.mse_loss(out, target)
                losses[step] = loss:item()
                assert_finite(losses[step], "loss")
                opt:zero_grad()
                loss:backward()
                opt:step()
            end
            assert_close_list(WANT.losses, losses, 1e-4, "losses")
            assert.is_true(losses[3] < losses[2] and losses[2] < losses[1])
        end)
end)

describe("ported zhouhaoyi/Informer2020 ProbAttention", function()
    -- idx = ((torch.arange(8 * 3).reshape(8, 3) * 5 + 3) % 8), 1-based here
    local function index_sample()
        return (tide.arange(0, 8 * 3):reshape(8, 3) * 5 + 3) % 8 + 1
    end

    for _, mask in ipairs({ false, true }) do
        local what = "ProbAttention and AttentionLayer match PyTorch, mask_flag " .. tostring(mask)
        it(what, function()
            local pa = ProbAttention(mask, 1, nil, 0.0)
            local q = det({ 2, 8, 2, 4 }, 12) * 5
            local k = det({ 2, 8, 2, 4 }, 13) * 5
            local v = det({ 2, 8, 2, 4 }, 14) * 5
            pa.fixed_index_sample = index_sample()
            local out = pa(q, k, v, nil)
            assert.same({ 2, 8, 2, 4 }, out:size())
            check(out, WANT["prob_" .. (mask and "True" or "False")], "ProbAttention")
            local al = AttentionLayer(pa, 8, 2)
            init(layer_params(al), 15)
            local x = series()
            check(al(x, x, x, nil), WANT["problayer_" .. (mask and "True" or "False")],
                "AttentionLayer")
        end)
    end
end)
