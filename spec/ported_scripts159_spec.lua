-- ported_scripts159_spec.lua — jadore801120/attention-is-all-you-need-pytorch's transformer/
-- Models.py (get_pad_mask, get_subsequent_mask, PositionalEncoding's numpy sinusoid table as a
-- buffer, Encoder, Decoder, Transformer with its weight sharing flags and x_logit_scale),
-- SubLayers.py (MultiHeadAttention, PositionwiseFeedForward), Modules.py
-- (ScaledDotProductAttention), Layers.py, Optim.py (ScheduledOptim), train.py (cal_performance,
-- cal_loss with label smoothing) and transformer/Translator.py (beam search), ported line for line
-- at tiny sizes (vocab 12, d_model 8, 2 heads, d_k = d_v = 4, 1 layer, seq 5, batch 2), checked
-- against PyTorch 1.13.
-- The Python line stands above each Lua line that differs from it. Token ids are 1-based:
-- PyTorch's id k is tide's k + 1 (PAD 1 -> 2, BOS 2 -> 3, EOS 3 -> 4).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

local DT = tide.float64

---------------------------------------------------------------------------------------------
-- transformer/Models.py (masks)
---------------------------------------------------------------------------------------------
-- def get_pad_mask(seq, pad_idx):
local function get_pad_mask(seq, pad_idx)
    -- return (seq != pad_idx).unsqueeze(-2)
    return seq:ne(pad_idx):unsqueeze(-2)
end

-- def get_subsequent_mask(seq):
local function get_subsequent_mask(seq)
    -- sz_b, len_s = seq.size()
    local _, len_s = seq:size(1), seq:size(2)
    -- subsequent_mask = (1 - torch.triu(
    --     torch.ones((1, len_s, len_s), device=seq.device), diagonal=1)).bool()
    local subsequent_mask = (1 - tide.triu(
        tide.ones({ 1, len_s, len_s }, { device = seq.device }), 1)):bool()
    return subsequent_mask
end

---------------------------------------------------------------------------------------------
-- transformer/Modules.py
---------------------------------------------------------------------------------------------
local ScaledDotProductAttention = nn.Module:extend("ScaledDotProductAttention")
-- def __init__(self, temperature, attn_dropout=0.1):
function ScaledDotProductAttention:init(temperature, attn_dropout)
    self.temperature = temperature
    self.dropout = nn.Dropout(attn_dropout or 0.1)
end

function ScaledDotProductAttention:forward(q, k, v, mask)
    -- attn = torch.matmul(q / self.temperature, k.transpose(2, 3))
    local attn = tide.matmul(q / self.temperature, k:transpose(3, 4))
    if mask ~= nil then
        -- attn = attn.masked_fill(mask == 0, -1e9)
        attn = attn:masked_fill(mask:eq(0), -1e9)
    end
    -- attn = self.dropout(F.softmax(attn, dim=-1))
    attn = self.dropout(F.softmax(attn, { dim = -1 }))
    local output = tide.matmul(attn, v)
    return output, attn
end

---------------------------------------------------------------------------------------------
-- transformer/SubLayers.py
---------------------------------------------------------------------------------------------
local MultiHeadAttention = nn.Module:extend("MultiHeadAttention")
-- def __init__(self, n_head, d_model, d_k, d_v, dropout=0.1):
function MultiHeadAttention:init(n_head, d_model, d_k, d_v, dropout)
    dropout = dropout or 0.1
    self.n_head = n_head
    self.d_k = d_k
    self.d_v = d_v
    -- self.w_qs = nn.Linear(d_model, n_head * d_k, bias=False)
    self.w_qs = nn.Linear(d_model, n_head * d_k, { bias = false })
    self.w_ks = nn.Linear(d_model, n_head * d_k, { bias = false })
    self.w_vs = nn.Linear(d_model, n_head * d_v, { bias = false })
    self.fc = nn.Linear(n_head * d_v, d_model, { bias = false })
    -- self.attention = ScaledDotProductAttention(temperature=d_k ** 0.5)
    self.attention = ScaledDotProductAttention(d_k ^ 0.5)
    self.dropout = nn.Dropout(dropout)
    -- self.layer_norm = nn.LayerNorm(d_model, eps=1e-6)
    self.layer_norm = nn.LayerNorm(d_model, { eps = 1e-6 })
end

function MultiHeadAttention:forward(q, k, v, mask)
    local d_k, d_v, n_head = self.d_k, self.d_v, self.n_head
    -- sz_b, len_q, len_k, len_v = q.size(0), q.size(1), k.size(1), v.size(1)
    local sz_b, len_q, len_k, len_v = q:size(1), q:size(2), k:size(2), v:size(2)
    local residual = q
    -- q = self.w_qs(q).view(sz_b, len_q, n_head, d_k)
    q = self.w_qs(q):view(sz_b, len_q, n_head, d_k)
    k = self.w_ks(k):view(sz_b, len_k, n_head, d_k)
    v = self.w_vs(v):view(sz_b, len_v, n_head, d_v)
    -- q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    q, k, v = q:transpose(2, 3), k:transpose(2, 3), v:transpose(2, 3)
    if mask ~= nil then
        -- mask = mask.unsqueeze(1)   # For head axis broadcasting.
        mask = mask:unsqueeze(2)
    end
    local attn
    q, attn = self.attention(q, k, v, mask)
    -- q = q.transpose(1, 2).contiguous().view(sz_b, len_q, -1)
    q = q:transpose(2, 3):contiguous():view(sz_b, len_q, -1)
    q = self.dropout(self.fc(q))
    -- q += residual
    q:add_(residual)
    q = self.layer_norm(q)
    return q, attn
end

local PositionwiseFeedForward = nn.Module:extend("PositionwiseFeedForward")
-- def __init__(self, d_in, d_hid, dropout=0.1):
function PositionwiseFeedForward:init(d_in, d_hid, dropout)
    self.w_1 = nn.Linear(d_in, d_hid) -- position-wise
    self.w_2 = nn.Linear(d_hid, d_in) -- position-wise
    self.layer_norm = nn.LayerNorm(d_in, { eps = 1e-6 })
    self.dropout = nn.Dropout(dropout or 0.1)
end

function PositionwiseFeedForward:forward(x)
    local residual = x
    x = self.w_2(F.relu(self.w_1(x)))
    x = self.dropout(x)
    -- x += residual
    x:add_(residual)
    x = self.layer_norm(x)
    return x
end

---------------------------------------------------------------------------------------------
-- transformer/Layers.py
---------------------------------------------------------------------------------------------
local EncoderLayer = nn.Module:extend("EncoderLayer")
function EncoderLayer:init(d_model, d_inner, n_head, d_k, d_v, dropout)
    -- self.slf_attn = MultiHeadAttention(n_head, d_model, d_k, d_v, dropout=dropout)
    self.slf_attn = MultiHeadAttention(n_head, d_model, d_k, d_v, dropout)
    self.pos_ffn = PositionwiseFeedForward(d_model, d_inner, dropout)
end

function EncoderLayer:forward(enc_input, slf_attn_mask)
    -- enc_output, enc_slf_attn = self.slf_attn(
    --     enc_input, enc_input, enc_input, mask=slf_attn_mask)
    local enc_output, enc_slf_attn = self.slf_attn(enc_input, enc_input, enc_input, slf_attn_mask)
    enc_output = self.pos_ffn(enc_output)
    return enc_output, enc_slf_attn
end

local DecoderLayer = nn.Module:extend("DecoderLayer")
function DecoderLayer:init(d_model, d_inner, n_head, d_k, d_v, dropout)
    self.slf_attn = MultiHeadAttention(n_head, d_model, d_k, d_v, dropout)
    self.enc_attn = MultiHeadAttention(n_head, d_model, d_k, d_v, dropout)
    self.pos_ffn = PositionwiseFeedForward(d_model, d_inner, dropout)
end

function DecoderLayer:forward(dec_input, enc_output, slf_attn_mask, dec_enc_attn_mask)
    local dec_output, dec_slf_attn = self.slf_attn(dec_input, dec_input, dec_input, slf_attn_mask)
    local dec_enc_attn
    dec_output, dec_enc_attn = self.enc_attn(dec_output, enc_output, enc_output, dec_enc_attn_mask)
    dec_output = self.pos_ffn(dec_output)
    return dec_output, dec_slf_attn, dec_enc_attn
end

---------------------------------------------------------------------------------------------
-- transformer/Models.py (modules)
---------------------------------------------------------------------------------------------
local PositionalEncoding = nn.Module:extend("PositionalEncoding")
-- def __init__(self, d_hid, n_position=200):
function PositionalEncoding:init(d_hid, n_position)
    -- self.register_buffer('pos_table', self._get_sinusoid_encoding_table(n_position, d_hid))
    self:register_buffer("pos_table", self:_get_sinusoid_encoding_table(n_position or 200, d_hid))
end

function PositionalEncoding:_get_sinusoid_encoding_table(n_position, d_hid)
    -- def get_position_angle_vec(position):
    --     return [position / np.power(10000, 2 * (hid_j // 2) / d_hid) for hid_j in range(d_hid)]
    local function get_position_angle_vec(position)
        local vec = {}
        for hid_j = 0, d_hid - 1 do
            vec[#vec + 1] = position / 10000 ^ (2 * math.floor(hid_j / 2) / d_hid)
        end
        return vec
    end
    -- sinusoid_table = np.array([get_position_angle_vec(pos_i) for pos_i in range(n_position)])
    local rows = {}
    for pos_i = 0, n_position - 1 do rows[#rows + 1] = get_position_angle_vec(pos_i) end
    local sinusoid_table = tide.tensor(rows, { dtype = tide.float64 })
    -- sinusoid_table[:, 0::2] = np.sin(sinusoid_table[:, 0::2])  # dim 2i
    sinusoid_table[{ {}, { 1, -1, 2 } }] = tide.sin(sinusoid_table[{ {}, { 1, -1, 2 } }])
    -- sinusoid_table[:, 1::2] = np.cos(sinusoid_table[:, 1::2])  # dim 2i+1
    sinusoid_table[{ {}, { 2, -1, 2 } }] = tide.cos(sinusoid_table[{ {}, { 2, -1, 2 } }])
    -- return torch.FloatTensor(sinusoid_table).unsqueeze(0)
    return sinusoid_table:float():unsqueeze(1)
end

function PositionalEncoding:forward(x)
    -- return x + self.pos_table[:, :x.size(1)].clone().detach()
    return x + self.pos_table[{ {}, { 1, x:size(2) } }]:clone():detach()
end

local Encoder = nn.Module:extend("Encoder")
-- def __init__(self, n_src_vocab, d_word_vec, n_layers, n_head, d_k, d_v,
--         d_model, d_inner, pad_idx, dropout=0.1, n_position=200, scale_emb=False):
function Encoder:init(n_src_vocab, d_word_vec, n_layers, n_head, d_k, d_v,
        d_model, d_inner, pad_idx, dropout, n_position, scale_emb)
    -- self.src_word_emb = nn.Embedding(n_src_vocab, d_word_vec, padding_idx=pad_idx)
    self.src_word_emb = nn.Embedding(n_src_vocab, d_word_vec, { padding_idx = pad_idx })
    -- self.position_enc = PositionalEncoding(d_word_vec, n_position=n_position)
    self.position_enc = PositionalEncoding(d_word_vec, n_position)
    -- self.dropout = nn.Dropout(p=dropout)
    self.dropout = nn.Dropout(dropout)
    -- self.layer_stack = nn.ModuleList([
    --     EncoderLayer(d_model, d_inner, n_head, d_k, d_v, dropout=dropout)
    --     for _ in range(n_layers)])
    local layers = {}
    for _ = 1, n_layers do
        layers[#layers + 1] = EncoderLayer(d_model, d_inner, n_head, d_k, d_v, dropout)
    end
    self.layer_stack = nn.ModuleList(layers)
    self.layer_norm = nn.LayerNorm(d_model, { eps = 1e-6 })
    self.scale_emb = scale_emb
    self.d_model = d_model
end

-- def forward(self, src_seq, src_mask, return_attns=False):
function Encoder:forward(src_seq, src_mask, return_attns)
    local enc_slf_attn_list = {}
    local enc_output = self.src_word_emb(src_seq)
    if self.scale_emb then
        -- enc_output *= self.d_model ** 0.5
        enc_output:mul_(self.d_model ^ 0.5)
    end
    enc_output = self.dropout(self.position_enc(enc_output))
    enc_output = self.layer_norm(enc_output)
    -- for enc_layer in self.layer_stack:
    for _, enc_layer in ipairs(self.layer_stack) do
        local enc_slf_attn
        -- enc_output, enc_slf_attn = enc_layer(enc_output, slf_attn_mask=src_mask)
        enc_output, enc_slf_attn = enc_layer(enc_output, src_mask)
        -- enc_slf_attn_list += [enc_slf_attn] if return_attns else []
        if return_attns then enc_slf_attn_list[#enc_slf_attn_list + 1] = enc_slf_attn end
    end
    if return_attns then
        return enc_output, enc_slf_attn_list
    end
    -- return enc_output,
    return enc_output
end

local Decoder = nn.Module:extend("Decoder")
-- def __init__(self, n_trg_vocab, d_word_vec, n_layers, n_head, d_k, d_v,
--         d_model, d_inner, pad_idx, n_position=200, dropout=0.1, scale_emb=False):
function Decoder:init(n_trg_vocab, d_word_vec, n_layers, n_head, d_k, d_v,
        d_model, d_inner, pad_idx, n_position, dropout, scale_emb)
    self.trg_word_emb = nn.Embedding(n_trg_vocab, d_word_vec, { padding_idx = pad_idx })
    self.position_enc = PositionalEncoding(d_word_vec, n_position)
    self.dropout = nn.Dropout(dropout)
    local layers = {}
    for _ = 1, n_layers do
        layers[#layers + 1] = DecoderLayer(d_model, d_inner, n_head, d_k, d_v, dropout)
    end
    self.layer_stack = nn.ModuleList(layers)
    self.layer_norm = nn.LayerNorm(d_model, { eps = 1e-6 })
    self.scale_emb = scale_emb
    self.d_model = d_model
end

function Decoder:forward(trg_seq, trg_mask, enc_output, src_mask, return_attns)
    local dec_slf_attn_list, dec_enc_attn_list = {}, {}
    local dec_output = self.trg_word_emb(trg_seq)
    if self.scale_emb then
        dec_output:mul_(self.d_model ^ 0.5)
    end
    dec_output = self.dropout(self.position_enc(dec_output))
    dec_output = self.layer_norm(dec_output)
    for _, dec_layer in ipairs(self.layer_stack) do
        local dec_slf_attn, dec_enc_attn
        -- dec_output, dec_slf_attn, dec_enc_attn = dec_layer(
        --     dec_output, enc_output, slf_attn_mask=trg_mask, dec_enc_attn_mask=src_mask)
        dec_output, dec_slf_attn, dec_enc_attn = dec_layer(
            dec_output, enc_output, trg_mask, src_mask)
        if return_attns then
            dec_slf_attn_list[#dec_slf_attn_list + 1] = dec_slf_attn
            dec_enc_attn_list[#dec_enc_attn_list + 1] = dec_enc_attn
        end
    end
    if return_attns then
        return dec_output, dec_slf_attn_list, dec_enc_attn_list
    end
    return dec_output
end

local Transformer = nn.Module:extend("Transformer")
-- def __init__(self, n_src_vocab, n_trg_vocab, src_pad_idx, trg_pad_idx,
--         d_word_vec=512, d_model=512, d_inner=2048,
--         n_layers=6, n_head=8, d_k=64, d_v=64, dropout=0.1, n_position=200,
--         trg_emb_prj_weight_sharing=True, emb_src_trg_weight_sharing=True,
--         scale_emb_or_prj='prj'):
function Transformer:init(n_src_vocab, n_trg_vocab, src_pad_idx, trg_pad_idx, o)
    local function dflt(v, d) if v == nil then return d end return v end
    local d_word_vec, d_model, d_inner = dflt(o.d_word_vec, 512), dflt(o.d_model, 512),
        dflt(o.d_inner, 2048)
    local n_layers, n_head, d_k, d_v = dflt(o.n_layers, 6), dflt(o.n_head, 8), dflt(o.d_k, 64),
        dflt(o.d_v, 64)
    local dropout, n_position = dflt(o.dropout, 0.1), dflt(o.n_position, 200)
    local trg_emb_prj_weight_sharing = dflt(o.trg_emb_prj_weight_sharing, true)
    local emb_src_trg_weight_sharing = dflt(o.emb_src_trg_weight_sharing, true)
    local scale_emb_or_prj = dflt(o.scale_emb_or_prj, "prj")

    self.src_pad_idx, self.trg_pad_idx = src_pad_idx, trg_pad_idx
    -- assert scale_emb_or_prj in ['emb', 'prj', 'none']
    assert(({ emb = true, prj = true, none = true })[scale_emb_or_prj])
    -- scale_emb = (scale_emb_or_prj == 'emb') if trg_emb_prj_weight_sharing else False
    local scale_emb = trg_emb_prj_weight_sharing and (scale_emb_or_prj == "emb")
    -- self.scale_prj = (scale_emb_or_prj == 'prj') if trg_emb_prj_weight_sharing else False
    self.scale_prj = trg_emb_prj_weight_sharing and (scale_emb_or_prj == "prj")
    self.d_model = d_model

    -- self.encoder = Encoder(
    --     n_src_vocab=n_src_vocab, n_position=n_position,
    --     d_word_vec=d_word_vec, d_model=d_model, d_inner=d_inner,
    --     n_layers=n_layers, n_head=n_head, d_k=d_k, d_v=d_v,
    --     pad_idx=src_pad_idx, dropout=dropout, scale_emb=scale_emb)
    self.encoder = Encoder(n_src_vocab, d_word_vec, n_layers, n_head, d_k, d_v,
        d_model, d_inner, src_pad_idx, dropout, n_position, scale_emb)
    self.decoder = Decoder(n_trg_vocab, d_word_vec, n_layers, n_head, d_k, d_v,
        d_model, d_inner, trg_pad_idx, n_position, dropout, scale_emb)
    -- self.trg_word_prj = nn.Linear(d_model, n_trg_vocab, bias=False)
    self.trg_word_prj = nn.Linear(d_model, n_trg_vocab, { bias = false })

    -- for p in self.parameters():
    for _, p in ipairs(self:parameters()) do
        -- if p.dim() > 1:
        if p:dim() > 1 then
            nn.init.xavier_uniform_(p)
        end
    end
    assert(d_model == d_word_vec, "To facilitate the residual connections, "
        .. "the dimensions of all module outputs shall be the same.")

    if trg_emb_prj_weight_sharing then
        -- Share the weight between target word embedding & last dense layer
        self.trg_word_prj.weight = self.decoder.trg_word_emb.weight
    end
    if emb_src_trg_weight_sharing then
        self.encoder.src_word_emb.weight = self.decoder.trg_word_emb.weight
    end
end

function Transformer:forward(src_seq, trg_seq)
    local src_mask = get_pad_mask(src_seq, self.src_pad_idx)
    -- trg_mask = get_pad_mask(trg_seq, self.trg_pad_idx) & get_subsequent_mask(trg_seq)
    local trg_mask = get_pad_mask(trg_seq, self.trg_pad_idx):logical_and(
        get_subsequent_mask(trg_seq))
    -- enc_output, *_ = self.encoder(src_seq, src_mask)
    local enc_output = self.encoder(src_seq, src_mask)
    local dec_output = self.decoder(trg_seq, trg_mask, enc_output, src_mask)
    local seq_logit = self.trg_word_prj(dec_output)
    if self.scale_prj then
        -- seq_logit *= self.d_model ** -0.5
        seq_logit:mul_(self.d_model ^ -0.5)
    end
    -- return seq_logit.view(-1, seq_logit.size(2))
    return seq_logit:view(-1, seq_logit:size(3))
end

---------------------------------------------------------------------------------------------
-- transformer/Optim.py
---------------------------------------------------------------------------------------------
-- class ScheduledOptim():
local ScheduledOptim = ported.class("ScheduledOptim")
function ScheduledOptim:__init__(optimizer, lr_mul, d_model, n_warmup_steps)
    self._optimizer = optimizer
    self.lr_mul = lr_mul
    self.d_model = d_model
    self.n_warmup_steps = n_warmup_steps
    self.n_steps = 0
end

function ScheduledOptim:step_and_update_lr()
    self:_update_learning_rate()
    self._optimizer:step()
end

function ScheduledOptim:zero_grad()
    self._optimizer:zero_grad()
end

function ScheduledOptim:_get_lr_scale()
    local d_model = self.d_model
    local n_steps, n_warmup_steps = self.n_steps, self.n_warmup_steps
    -- return (d_model ** -0.5) * min(n_steps ** (-0.5), n_steps * n_warmup_steps ** (-1.5))
    return (d_model ^ -0.5) * math.min(n_steps ^ (-0.5), n_steps * n_warmup_steps ^ (-1.5))
end

function ScheduledOptim:_update_learning_rate()
    self.n_steps = self.n_steps + 1
    local lr = self.lr_mul * self:_get_lr_scale()
    -- for param_group in self._optimizer.param_groups:
    for _, param_group in ipairs(self._optimizer.param_groups) do
        -- param_group['lr'] = lr
        param_group.lr = lr
    end
end

---------------------------------------------------------------------------------------------
-- train.py
---------------------------------------------------------------------------------------------
-- def cal_loss(pred, gold, trg_pad_idx, smoothing=False):
local function cal_loss(pred, gold, trg_pad_idx, smoothing)
    gold = gold:contiguous():view(-1)
    local loss
    if smoothing then
        local eps = 0.1
        -- n_class = pred.size(1)
        local n_class = pred:size(2)
        -- one_hot = torch.zeros_like(pred).scatter(1, gold.view(-1, 1), 1)
        local one_hot = tide.zeros_like(pred):scatter(2, gold:view(-1, 1), 1)
        one_hot = one_hot * (1 - eps) + (1 - one_hot) * eps / (n_class - 1)
        -- log_prb = F.log_softmax(pred, dim=1)
        local log_prb = F.log_softmax(pred, { dim = 2 })
        local non_pad_mask = gold:ne(trg_pad_idx)
        -- loss = -(one_hot * log_prb).sum(dim=1)
        loss = -(one_hot * log_prb):sum(2)
        loss = loss:masked_select(non_pad_mask):sum() -- average later
    else
        -- loss = F.cross_entropy(pred, gold, ignore_index=trg_pad_idx, reduction='sum')
        loss = F.cross_entropy(pred, gold, { ignore_index = trg_pad_idx, reduction = "sum" })
    end
    return loss
end

-- def cal_performance(pred, gold, trg_pad_idx, smoothing=False):
local function cal_performance(pred, gold, trg_pad_idx, smoothing)
    local loss = cal_loss(pred, gold, trg_pad_idx, smoothing)
    -- pred = pred.max(1)[1]
    pred = select(2, pred:max(2))
    gold = gold:contiguous():view(-1)
    local non_pad_mask = gold:ne(trg_pad_idx)
    local n_correct = pred:eq(gold):masked_select(non_pad_mask):sum():item()
    local n_word = non_pad_mask:sum():item()
    return loss, n_correct, n_word
end

---------------------------------------------------------------------------------------------
-- transformer/Translator.py
---------------------------------------------------------------------------------------------
local Translator = nn.Module:extend("Translator")
-- def __init__(self, model, beam_size, max_seq_len,
--         src_pad_idx, trg_pad_idx, trg_bos_idx, trg_eos_idx):
function Translator:init(model, beam_size, max_seq_len,
        src_pad_idx, trg_pad_idx, trg_bos_idx, trg_eos_idx)
    self.alpha = 0.7
    self.beam_size = beam_size
    self.max_seq_len = max_seq_len
    self.src_pad_idx = src_pad_idx
    self.trg_bos_idx = trg_bos_idx
    self.trg_eos_idx = trg_eos_idx
    self.model = model
    self.model:eval()
    -- self.register_buffer('init_seq', torch.LongTensor([[trg_bos_idx]]))
    self:register_buffer("init_seq", tide.tensor({ { trg_bos_idx } }, { dtype = tide.int64 }))
    -- self.register_buffer(
    --     'blank_seqs',
    --     torch.full((beam_size, max_seq_len), trg_pad_idx, dtype=torch.long))
    self:register_buffer("blank_seqs",
        tide.full({ beam_size, max_seq_len }, trg_pad_idx, { dtype = tide.int64 }))
    -- self.blank_seqs[:, 0] = self.trg_bos_idx
    self.blank_seqs[{ {}, 1 }] = self.trg_bos_idx
    -- self.register_buffer(
    --     'len_map',
    --     torch.arange(1, max_seq_len + 1, dtype=torch.long).unsqueeze(0))
    self:register_buffer("len_map",
        tide.arange(1, max_seq_len + 1, { dtype = tide.int64 }):unsqueeze(1))
end

function Translator:_model_decode(trg_seq, enc_output, src_mask)
    local trg_mask = get_subsequent_mask(trg_seq)
    -- dec_output, *_ = self.model.decoder(trg_seq, trg_mask, enc_output, src_mask)
    local dec_output = self.model.decoder(trg_seq, trg_mask, enc_output, src_mask)
    -- return F.softmax(self.model.trg_word_prj(dec_output), dim=-1)
    return F.softmax(self.model.trg_word_prj(dec_output), { dim = -1 })
end

function Translator:_get_init_state(src_seq, src_mask)
    local beam_size = self.beam_size
    local enc_output = self.model.encoder(src_seq, src_mask)
    local dec_output = self:_model_decode(self.init_seq, enc_output, src_mask)
    -- best_k_probs, best_k_idx = dec_output[:, -1, :].topk(beam_size)
    local best_k_probs, best_k_idx = dec_output[{ {}, -1, {} }]:topk(beam_size)
    -- scores = torch.log(best_k_probs).view(beam_size)
    local scores = tide.log(best_k_probs):view(beam_size)
    local gen_seq = self.blank_seqs:clone():detach()
    -- gen_seq[:, 1] = best_k_idx[0]
    gen_seq[{ {}, 2 }] = best_k_idx[1]
    -- enc_output = enc_output.repeat(beam_size, 1, 1)
    enc_output = enc_output["repeat"](enc_output, beam_size, 1, 1)
    return enc_output, gen_seq, scores
end

function Translator:_get_the_best_score_and_idx(gen_seq, dec_output, scores, step)
    -- assert len(scores.size()) == 1
    assert(scores:dim() == 1)
    local beam_size = self.beam_size
    -- Get k candidates for each beam, k^2 candidates in total.
    -- best_k2_probs, best_k2_idx = dec_output[:, -1, :].topk(beam_size)
    local best_k2_probs, best_k2_idx = dec_output[{ {}, -1, {} }]:topk(beam_size)
    -- Include the previous scores.
    -- scores = torch.log(best_k2_probs).view(beam_size, -1) + scores.view(beam_size, 1)
    scores = tide.log(best_k2_probs):view(beam_size, -1) + scores:view(beam_size, 1)
    -- Get the best k candidates from k^2 candidates.
    -- scores, best_k_idx_in_k2 = scores.view(-1).topk(beam_size)
    local best_k_idx_in_k2
    scores, best_k_idx_in_k2 = scores:view(-1):topk(beam_size)
    -- Get the corresponding positions of the best k candidiates (1-based flat index: shift).
    -- best_k_r_idxs, best_k_c_idxs = best_k_idx_in_k2 // beam_size, best_k_idx_in_k2 % beam_size
    local best_k_r_idxs = (best_k_idx_in_k2 - 1):div(beam_size, { rounding_mode = "floor" }) + 1
    local best_k_c_idxs = (best_k_idx_in_k2 - 1):remainder(beam_size) + 1
    -- best_k_idx = best_k2_idx[best_k_r_idxs, best_k_c_idxs]
    local best_k_idx = best_k2_idx[{ best_k_r_idxs, best_k_c_idxs }]
    -- Copy the corresponding previous tokens.
    -- gen_seq[:, :step] = gen_seq[best_k_r_idxs, :step]
    gen_seq[{ {}, { 1, step } }] = gen_seq[{ best_k_r_idxs, { 1, step } }]
    -- Set the best tokens in this beam search step
    -- gen_seq[:, step] = best_k_idx
    gen_seq[{ {}, step + 1 }] = best_k_idx
    return gen_seq, scores
end

function Translator:translate_sentence(src_seq)
    -- Only accept batch size equals to 1 in this function.
    -- assert src_seq.size(0) == 1
    assert(src_seq:size(1) == 1)
    local src_pad_idx, trg_eos_idx = self.src_pad_idx, self.trg_eos_idx
    local max_seq_len, beam_size, alpha = self.max_seq_len, self.beam_size, self.alpha
    local gen_seq, seq_lens
    -- ans_idx = 0   # default
    local ans_idx = 1
    -- with torch.no_grad():
    tide.no_grad(function()
        local src_mask = get_pad_mask(src_seq, src_pad_idx)
        local enc_output, scores
        enc_output, gen_seq, scores = self:_get_init_state(src_seq, src_mask)
        -- for step in range(2, max_seq_len):    # decode up to max length
        for step = 2, max_seq_len - 1 do
            -- dec_output = self._model_decode(gen_seq[:, :step], enc_output, src_mask)
            local dec_output = self:_model_decode(gen_seq[{ {}, { 1, step } }], enc_output,
                src_mask)
            gen_seq, scores = self:_get_the_best_score_and_idx(gen_seq, dec_output, scores, step)
            -- eos_locs = gen_seq == trg_eos_idx
            local eos_locs = gen_seq:eq(trg_eos_idx)
            -- seq_lens, _ = self.len_map.masked_fill(~eos_locs, max_seq_len).min(1)
            seq_lens = self.len_map:masked_fill(eos_locs:logical_not(), max_seq_len):min(2)
            -- if (eos_locs.sum(1) > 0).sum(0).item() == beam_size:
            if eos_locs:sum(2):gt(0):sum(1):item() == beam_size then
                -- _, ans_idx = scores.div(seq_lens.float() ** alpha).max(0)
                local _, idx = scores:div(seq_lens:float():pow(alpha)):max(1)
                ans_idx = idx:item()
                break
            end
        end
    end)
    -- return gen_seq[ans_idx][:seq_lens[ans_idx]].tolist()
    return gen_seq[ans_idx][{ { 1, seq_lens[ans_idx] } }]:tolist()
end

---------------------------------------------------------------------------------------------
-- the checks
---------------------------------------------------------------------------------------------
-- the PyTorch ids plus one: PAD 1, BOS 2, EOS 3 there
local PAD, BOS, EOS = 2, 3, 4

-- each parameter in named_parameters order is sin(arange(numel) * 2.3 + i) * 0.5, plus 1 for a
-- 1-D one of even i (the reference script does the same in PyTorch)
local function fill_deterministic(model)
    tide.no_grad(function()
        local i = 0
        for _, p in model:named_parameters() do
            local v = tide.sin(tide.arange(p:numel(), { dtype = DT }) * 2.3 + i) * 0.5
            if p.ndim == 1 and i % 2 == 0 then v = v + 1 end
            p:copy_(v:view(p.shape))
            i = i + 1
        end
    end)
end

local function make(dropout)
    tide.manual_seed(0)
    -- Transformer(12, 12, 1, 1, d_word_vec=8, d_model=8, d_inner=16, n_layers=1, n_head=2,
    --     d_k=4, d_v=4, dropout=dropout, n_position=20).double()
    local m = Transformer(12, 12, PAD, PAD, { d_word_vec = 8, d_model = 8, d_inner = 16,
        n_layers = 1, n_head = 2, d_k = 4, d_v = 4, dropout = dropout, n_position = 20 }):to(DT)
    fill_deterministic(m)
    return m
end

-- src = torch.tensor([[2,5,6,7,3],[2,8,9,3,1]]); trg = ...[[2,4,5,6,7,3],[2,10,11,3,1,1]]
local src = tide.tensor({ { 3, 6, 7, 8, 4 }, { 3, 9, 10, 4, 2 } }, { dtype = tide.int64 })
local trg = tide.tensor({ { 3, 5, 6, 7, 8, 4 }, { 3, 11, 12, 4, 2, 2 } }, { dtype = tide.int64 })
-- trg_seq, gold = trg[:, :-1], trg[:, 1:].contiguous().view(-1)   (patch_trg)
local trg_seq, gold = trg[{ {}, { 1, -2 } }], trg[{ {}, { 2, -1 } }]:contiguous():view(-1)

local function flat_every(t, k)
    local v, out = t:contiguous():view(-1):tolist(), {}
    for i = 1, #v, k do out[#out + 1] = v[i] end
    return out
end

local function ints(t)
    return t:to(tide.int64):view(-1):tolist()
end

describe("attention-is-all-you-need-pytorch ported", function()
    it("the masks and the sinusoid table as PyTorch's", function()
        assert.are.same({ 1, 1, 1, 1, 1, 1, 1, 1, 1, 0 }, ints(get_pad_mask(src, PAD)))
        local sm = get_subsequent_mask(trg_seq)
        assert.are.same({ 1, 5, 5 }, sm.shape)
        assert.are.equal(tide.bool, sm.dtype)
        assert.are.same({ 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0,
            1, 1, 1, 1, 1 }, ints(sm))
        local trg_mask = get_pad_mask(trg_seq, PAD):logical_and(sm)
        assert.are.same({ 2, 5, 5 }, trg_mask.shape)
        assert.are.same({ 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0,
            1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0,
            1, 1, 1, 1, 0, 1, 1, 1, 1, 0 }, ints(trg_mask))
        local pe = PositionalEncoding(8, 20)
        assert.are.same({ 1, 20, 8 }, pe.pos_table.shape)
        assert.are.equal(tide.float32, pe.pos_table.dtype)
        -- pos 3: sin(3), cos(3), sin(3 / 10), cos(3 / 10), ...
        local row = pe.pos_table[1][4]:tolist()
        assert.is_true(ported.close(row[1], math.sin(3), 1e-6))
        assert.is_true(ported.close(row[2], math.cos(3), 1e-6))
        assert.is_true(ported.close(row[3], math.sin(3 / 10000 ^ 0.25), 1e-6))
        assert.is_true(ported.close(row[8], math.cos(3 / 10000 ^ 0.75), 1e-6))
    end)

    it("weight sharing, the encoder / decoder outputs, logits, cal_performance and the "
        .. "beam search as PyTorch's", function()
        local m = make(0.1)
        local names = {}
        for n in m:named_parameters() do names[#names + 1] = n end
        -- the shared embedding is listed once, under its first name, as PyTorch's
        assert.are.equal(35, #names)
        assert.are.equal("encoder.src_word_emb.weight", names[1])
        assert.are.equal("encoder.layer_stack.1.slf_attn.w_qs.weight", names[2])
        assert.are.equal("decoder.layer_stack.1.slf_attn.w_qs.weight", names[16])
        assert.are.equal("decoder.layer_norm.bias", names[35])
        assert.are.equal(m.trg_word_prj.weight, m.decoder.trg_word_emb.weight)
        assert.are.equal(m.encoder.src_word_emb.weight, m.decoder.trg_word_emb.weight)
        m:eval()
        local pm = get_pad_mask(src, PAD)
        local trg_mask = get_pad_mask(trg_seq, PAD):logical_and(get_subsequent_mask(trg_seq))
        tide.no_grad(function()
            local enc = m.encoder(src, pm)
            local dec = m.decoder(trg_seq, trg_mask, enc, pm)
            assert.are.same({ 2, 5, 8 }, enc.shape)
            ported.assert_close_list({ 0.6947980582486433, 1.2040566176724288,
                1.4171044187536121, 0.8674468409019774, 0.9564029021872117, 1.1428137738883468,
                0.678865465006943, 2.0263647465568306, 0.8227151582271903, 1.4038070205649618,
                1.4195994716272382, 0.8718243867555545 }, flat_every(enc, 7), 1e-9, "enc")
            assert.is_true(ported.close(enc:sum():item(), 91.4313291941638, 1e-9))
            ported.assert_close_list({ 1.2559353867227663, 0.5895279351248711,
                1.3198313844538079, 1.549509753138723, 0.4604136734499389, 1.5026424866169092,
                0.023938285899397303, 1.7744896036555922, 1.2313032501243657,
                0.5911076256919848, 1.3259855221980426, 1.6165602391250613 },
                flat_every(dec, 7), 1e-9, "dec")
            assert.is_true(ported.close(dec:sum():item(), 85.82877434999139, 1e-9))
            local logit = m(src, trg_seq)
            assert.are.same({ 10, 12 }, logit.shape)
            ported.assert_close_list({ 0.32500442865440504, 0.35675805488467144,
                0.1909696378177221, -0.011529977184262713, -0.19587825359941247,
                -0.33648486576937126, -0.4180247887542114, -0.3828855178335705,
                -0.3079828762736922, -0.17690829612838527, -0.005985995180001774 },
                flat_every(logit, 11), 1e-9, "logit")
            assert.is_true(ported.close(logit:sum():item(), -8.072954969393107, 1e-9))
            local loss, n_correct, n_word = cal_performance(logit, gold, PAD, false)
            assert.is_true(ported.close(loss:item(), 20.957894283280762, 1e-9))
            assert.are.same({ 1, 8 }, { n_correct, n_word })
            loss, n_correct, n_word = cal_performance(logit, gold, PAD, true)
            assert.is_true(ported.close(loss:item(), 20.870746799383202, 1e-9))
            assert.are.same({ 1, 8 }, { n_correct, n_word })
        end)
        -- Translator(m, 2, 6, PAD, PAD, BOS, EOS).translate_sentence(src[:1]) is
        -- [2, 11, 11, 11, 0, 11] in PyTorch's ids (the best beam changes at step 4)
        local tr = Translator(m, 2, 6, PAD, PAD, BOS, EOS)
        assert.are.same({ 3, 12, 12, 12, 1, 12 }, tr:translate_sentence(src[{ { 1, 1 } }]))
        assert.are.same({ 3, 12, 12, 12, 1, 12 }, tr:translate_sentence(src[{ { 2, 2 } }]))
    end)

    it("2 steps of Adam under ScheduledOptim with label smoothing as PyTorch's", function()
        local m = make(0.0)
        m:train()
        -- ScaledDotProductAttention keeps its own attn_dropout=0.1 (MultiHeadAttention does not
        -- pass dropout on): set to 0 on both sides for the value check
        for _, mod in ipairs(m:modules()) do
            if tide.isinstance(mod, nn.Dropout) then mod.p = 0.0 end
        end
        -- optimizer = ScheduledOptim(
        --     optim.Adam(transformer.parameters(), betas=(0.9, 0.98), eps=1e-09),
        --     opt.lr_mul, opt.d_model, opt.n_warmup_steps)
        local optimizer = ScheduledOptim(
            optim.Adam(m:parameters(), { betas = { 0.9, 0.98 }, eps = 1e-09 }), 2.0, 8, 4)
        local want_loss = { 20.870746799383202, 18.791098182389387, 17.122390817364803 }
        local want_correct = { 1, 1, 2 }
        local want_lr = { 0.08838834764831845, 0.1767766952966369 }
        for step = 1, 3 do
            optimizer:zero_grad()
            local pred = m(src, trg_seq)
            local loss, n_correct, n_word = cal_performance(pred, gold, PAD, true)
            assert_finite(loss:item(), "loss")
            assert.is_true(ported.close(loss:item(), want_loss[step], 1e-8),
                string.format("step %d loss %.12g, PyTorch %.12g", step, loss:item(),
                    want_loss[step]))
            assert.are.same({ want_correct[step], 8 }, { n_correct, n_word })
            if step == 3 then break end
            loss:backward()
            optimizer:step_and_update_lr()
            assert.is_true(ported.close(optimizer._optimizer.param_groups[1].lr, want_lr[step],
                1e-12))
        end
        ported.assert_close_list({ -0.24752488482406376, 0.11858307181364072,
            -0.73460827616305, 0.03461132330830999, -0.15337700604948973 },
            m.decoder.trg_word_emb.weight:view(-1):narrow(1, 1, 5):tolist(), 1e-7, "shared emb")
    end)
end)
