-- ported_scripts84_spec.lua — kimiyoung/transformer-xl's pytorch/mem_transformer.py
-- (PositionalEmbedding, PositionwiseFF, RelMultiHeadAttn._rel_shift,
-- RelPartialLearnableMultiHeadAttn, RelPartialLearnableDecoderLayer, AdaptiveEmbedding's
-- div_val 1 path, MemTransformerLM with attn_type 0: init_mems, _update_mems, _forward, forward)
-- and pytorch/utils/proj_adaptive_softmax.py's ProjectedAdaptiveLogSoftmax (n_clusters = 0, the
-- single softmax, and the clusters' path with one cutoff), ported line for line at tiny
-- sizes, then train.py's loop for 2 segments with the memories carried over (mems = ret[1:]).
-- The Python line stands above each Lua line that differs. Token ids and class targets are
-- 1-based. Skipped: attn_type 1-3, same_length, sample_softmax and div_val > 1.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- class PositionalEmbedding(nn.Module):
local PositionalEmbedding = nn.Module:extend("PositionalEmbedding")
function PositionalEmbedding:init(demb)
    self.demb = demb
    -- inv_freq = 1 / (10000 ** (torch.arange(0.0, demb, 2.0) / demb))
    local inv_freq = 1 / (10000 ^ (tide.arange(0.0, demb, 2.0) / demb))
    self:register_buffer("inv_freq", inv_freq)
end

-- def forward(self, pos_seq, bsz=None):
function PositionalEmbedding:forward(pos_seq, bsz)
    -- sinusoid_inp = torch.ger(pos_seq, self.inv_freq)
    local sinusoid_inp = tide.ger(pos_seq, self.inv_freq)
    -- pos_emb = torch.cat([sinusoid_inp.sin(), sinusoid_inp.cos()], dim=-1)
    local pos_emb = tide.cat({ sinusoid_inp:sin(), sinusoid_inp:cos() }, -1)
    if bsz ~= nil then
        -- return pos_emb[:,None,:].expand(-1, bsz, -1)
        return pos_emb[{ {}, tide.newaxis, {} }]:expand(-1, bsz, -1)
    else
        -- return pos_emb[:,None,:]
        return pos_emb[{ {}, tide.newaxis, {} }]
    end
end

-- class PositionwiseFF(nn.Module):
local PositionwiseFF = nn.Module:extend("PositionwiseFF")
-- def __init__(self, d_model, d_inner, dropout, pre_lnorm=False):
function PositionwiseFF:init(d_model, d_inner, dropout, pre_lnorm)
    self.d_model = d_model
    self.d_inner = d_inner
    self.dropout = dropout
    self.CoreNet = nn.Sequential(
        -- nn.Linear(d_model, d_inner), nn.ReLU(inplace=True),
        nn.Linear(d_model, d_inner), nn.ReLU(true),
        nn.Dropout(dropout),
        nn.Linear(d_inner, d_model),
        nn.Dropout(dropout)
    )
    self.layer_norm = nn.LayerNorm(d_model)
    self.pre_lnorm = pre_lnorm or false
end

function PositionwiseFF:forward(inp)
    local output
    if self.pre_lnorm then
        -- layer normalization + positionwise feed-forward
        local core_out = self.CoreNet(self.layer_norm(inp))
        -- residual connection
        output = core_out + inp
    else
        -- positionwise feed-forward
        local core_out = self.CoreNet(inp)
        -- residual connection + layer normalization
        output = self.layer_norm(inp + core_out)
    end
    return output
end

-- class RelMultiHeadAttn(nn.Module):
local RelMultiHeadAttn = nn.Module:extend("RelMultiHeadAttn")
-- def __init__(self, n_head, d_model, d_head, dropout, dropatt=0,
--              tgt_len=None, ext_len=None, mem_len=None, pre_lnorm=False):
function RelMultiHeadAttn:init(n_head, d_model, d_head, dropout, opts)
    opts = opts or {}
    self.n_head = n_head
    self.d_model = d_model
    self.d_head = d_head
    self.dropout = dropout
    -- self.qkv_net = nn.Linear(d_model, 3 * n_head * d_head, bias=False)
    self.qkv_net = nn.Linear(d_model, 3 * n_head * d_head, false)
    self.drop = nn.Dropout(dropout)
    self.dropatt = nn.Dropout(opts.dropatt or 0)
    -- self.o_net = nn.Linear(n_head * d_head, d_model, bias=False)
    self.o_net = nn.Linear(n_head * d_head, d_model, false)
    self.layer_norm = nn.LayerNorm(d_model)
    self.scale = 1 / (d_head ^ 0.5)
    self.pre_lnorm = opts.pre_lnorm or false
end

-- def _rel_shift(self, x, zero_triu=False):
function RelMultiHeadAttn:_rel_shift(x, zero_triu)
    -- zero_pad = torch.zeros((x.size(0), 1, *x.size()[2:]),
    --                        device=x.device, dtype=x.dtype)
    local rest = { unpack(x.shape, 3) }
    local zero_pad = tide.zeros({ x:size(1), 1, unpack(rest) }, { device = x.device,
        dtype = x.dtype })
    -- x_padded = torch.cat([zero_pad, x], dim=1)
    local x_padded = tide.cat({ zero_pad, x }, 2)
    -- x_padded = x_padded.view(x.size(1) + 1, x.size(0), *x.size()[2:])
    x_padded = x_padded:view(x:size(2) + 1, x:size(1), unpack(rest))
    -- x = x_padded[1:].view_as(x)
    x = x_padded[{ { 2, -1 } }]:view_as(x)
    if zero_triu then
        -- ones = torch.ones((x.size(0), x.size(1)))
        local ones = tide.ones({ x:size(1), x:size(2) })
        -- x = x * torch.tril(ones, x.size(1) - x.size(0))[:,:,None,None]
        x = x * tide.tril(ones, x:size(2) - x:size(1))[{ {}, {}, tide.newaxis, tide.newaxis }]
    end
    return x
end

-- class RelPartialLearnableMultiHeadAttn(RelMultiHeadAttn):
local RelPartialLearnableMultiHeadAttn = RelMultiHeadAttn:extend("RelPartialLearnableMultiHeadAttn")
function RelPartialLearnableMultiHeadAttn:init(...)
    -- super(RelPartialLearnableMultiHeadAttn, self).__init__(*args, **kwargs)
    RelMultiHeadAttn.init(self, ...)
    -- self.r_net = nn.Linear(self.d_model, self.n_head * self.d_head, bias=False)
    self.r_net = nn.Linear(self.d_model, self.n_head * self.d_head, false)
end

-- def forward(self, w, r, r_w_bias, r_r_bias, attn_mask=None, mems=None):
function RelPartialLearnableMultiHeadAttn:forward(w, r, r_w_bias, r_r_bias, attn_mask, mems)
    -- qlen, rlen, bsz = w.size(0), r.size(0), w.size(1)
    local qlen, rlen, bsz = w:size(1), r:size(1), w:size(2)
    local w_heads, r_head_k, w_head_q, w_head_k, w_head_v
    if mems ~= nil then
        -- cat = torch.cat([mems, w], 0)
        local cat = tide.cat({ mems, w }, 1)
        if self.pre_lnorm then
            w_heads = self.qkv_net(self.layer_norm(cat))
        else
            w_heads = self.qkv_net(cat)
        end
        r_head_k = self.r_net(r)
        -- w_head_q, w_head_k, w_head_v = torch.chunk(w_heads, 3, dim=-1)
        w_head_q, w_head_k, w_head_v = unpack(tide.chunk(w_heads, 3, -1))
        -- w_head_q = w_head_q[-qlen:]
        w_head_q = w_head_q[{ { -qlen, -1 } }]
    else
        if self.pre_lnorm then
            w_heads = self.qkv_net(self.layer_norm(w))
        else
            w_heads = self.qkv_net(w)
        end
        r_head_k = self.r_net(r)
        w_head_q, w_head_k, w_head_v = unpack(tide.chunk(w_heads, 3, -1))
    end
    -- klen = w_head_k.size(0)
    local klen = w_head_k:size(1)

    w_head_q = w_head_q:view(qlen, bsz, self.n_head, self.d_head) -- qlen x bsz x n_head x d_head
    w_head_k = w_head_k:view(klen, bsz, self.n_head, self.d_head)
    w_head_v = w_head_v:view(klen, bsz, self.n_head, self.d_head)
    r_head_k = r_head_k:view(rlen, self.n_head, self.d_head) -- qlen x n_head x d_head

    -- compute attention score
    local rw_head_q = w_head_q + r_w_bias -- qlen x bsz x n_head x d_head
    -- AC = torch.einsum('ibnd,jbnd->ijbn', (rw_head_q, w_head_k))
    local AC = tide.einsum("ibnd,jbnd->ijbn", rw_head_q, w_head_k) -- qlen x klen x bsz x n_head
    local rr_head_q = w_head_q + r_r_bias
    -- BD = torch.einsum('ibnd,jnd->ijbn', (rr_head_q, r_head_k))
    local BD = tide.einsum("ibnd,jnd->ijbn", rr_head_q, r_head_k)
    BD = self:_rel_shift(BD)

    -- [qlen x klen x bsz x n_head]
    local attn_score = AC + BD
    attn_score:mul_(self.scale)

    -- compute attention probability
    -- if attn_mask is not None and attn_mask.any().item():
    if attn_mask ~= nil and attn_mask:any():item() then
        if attn_mask:dim() == 2 then
            -- attn_score = attn_score.float().masked_fill(
            --     attn_mask[None,:,:,None], -float('inf')).type_as(attn_score)
            -- (the result takes the broadcast shape of the score and the mask, as PyTorch's)
            attn_score = attn_score:float():masked_fill(
                attn_mask[{ tide.newaxis, {}, {}, tide.newaxis }], -math.huge):type_as(attn_score)
        elseif attn_mask:dim() == 3 then
            -- attn_score = attn_score.float().masked_fill(
            --     attn_mask[:,:,:,None], -float('inf')).type_as(attn_score)
            attn_score = attn_score:float():masked_fill(
                attn_mask[{ {}, {}, {}, tide.newaxis }], -math.huge):type_as(attn_score)
        end
    end

    -- attn_prob = F.softmax(attn_score, dim=1)
    local attn_prob = F.softmax(attn_score, 2)
    attn_prob = self.dropatt(attn_prob)

    -- attn_vec = torch.einsum('ijbn,jbnd->ibnd', (attn_prob, w_head_v))
    local attn_vec = tide.einsum("ijbn,jbnd->ibnd", attn_prob, w_head_v)
    -- [qlen x bsz x n_head x d_head]
    attn_vec = attn_vec:contiguous():view(
        attn_vec:size(1), attn_vec:size(2), self.n_head * self.d_head)

    -- linear projection
    local attn_out = self.o_net(attn_vec)
    attn_out = self.drop(attn_out)

    local output
    if self.pre_lnorm then
        -- residual connection
        output = w + attn_out
    else
        -- residual connection + layer normalization
        output = self.layer_norm(w + attn_out)
    end
    return output
end

-- class RelPartialLearnableDecoderLayer(nn.Module):
local RelPartialLearnableDecoderLayer = nn.Module:extend("RelPartialLearnableDecoderLayer")
-- def __init__(self, n_head, d_model, d_head, d_inner, dropout, **kwargs):
function RelPartialLearnableDecoderLayer:init(n_head, d_model, d_head, d_inner, dropout, kwargs)
    -- self.dec_attn = RelPartialLearnableMultiHeadAttn(n_head, d_model,
    --                     d_head, dropout, **kwargs)
    self.dec_attn = RelPartialLearnableMultiHeadAttn(n_head, d_model, d_head, dropout, kwargs)
    -- self.pos_ff = PositionwiseFF(d_model, d_inner, dropout,
    --                              pre_lnorm=kwargs.get('pre_lnorm'))
    self.pos_ff = PositionwiseFF(d_model, d_inner, dropout, kwargs.pre_lnorm)
end

-- def forward(self, dec_inp, r, r_w_bias, r_r_bias, dec_attn_mask=None, mems=None):
function RelPartialLearnableDecoderLayer:forward(dec_inp, r, r_w_bias, r_r_bias, dec_attn_mask,
                                                 mems)
    local output = self.dec_attn(dec_inp, r, r_w_bias, r_r_bias, dec_attn_mask, mems)
    output = self.pos_ff(output)
    return output
end

-- class AdaptiveEmbedding(nn.Module):
local AdaptiveEmbedding = nn.Module:extend("AdaptiveEmbedding")
-- def __init__(self, n_token, d_embed, d_proj, cutoffs, div_val=1, sample_softmax=False):
function AdaptiveEmbedding:init(n_token, d_embed, d_proj, cutoffs, div_val, sample_softmax)
    div_val = div_val or 1
    self.n_token = n_token
    self.d_embed = d_embed
    -- self.cutoffs = cutoffs + [n_token]
    self.cutoffs = { unpack(cutoffs) }
    self.cutoffs[#self.cutoffs + 1] = n_token
    self.div_val = div_val
    self.d_proj = d_proj
    self.emb_scale = d_proj ^ 0.5
    -- self.cutoff_ends = [0] + self.cutoffs
    self.cutoff_ends = { 0, unpack(self.cutoffs) }
    self.emb_layers = nn.ModuleList()
    self.emb_projs = nn.ParameterList()
    if div_val == 1 then
        self.emb_layers:append(
            -- nn.Embedding(n_token, d_embed, sparse=sample_softmax>0)
            nn.Embedding(n_token, d_embed, { sparse = (sample_softmax or 0) > 0 })
        )
        if d_proj ~= d_embed then
            -- self.emb_projs.append(nn.Parameter(torch.Tensor(d_proj, d_embed)))
            self.emb_projs:append(nn.Parameter(tide.Tensor(d_proj, d_embed)))
        end
    else
        error("div_val > 1 is not ported")
    end
end

function AdaptiveEmbedding:forward(inp)
    local embed
    if self.div_val == 1 then
        -- embed = self.emb_layers[0](inp)
        embed = self.emb_layers[1](inp)
        if self.d_proj ~= self.d_embed then
            -- embed  = F.linear(embed, self.emb_projs[0])
            embed = F.linear(embed, self.emb_projs[1])
        end
    end
    embed:mul_(self.emb_scale)
    return embed
end

-- class ProjectedAdaptiveLogSoftmax(nn.Module):  (utils/proj_adaptive_softmax.py)
local ProjectedAdaptiveLogSoftmax = nn.Module:extend("ProjectedAdaptiveLogSoftmax")
-- def __init__(self, n_token, d_embed, d_proj, cutoffs, div_val=1, keep_order=False):
function ProjectedAdaptiveLogSoftmax:init(n_token, d_embed, d_proj, cutoffs, div_val, keep_order)
    div_val = div_val or 1
    self.n_token = n_token
    self.d_embed = d_embed
    self.d_proj = d_proj
    self.cutoffs = { unpack(cutoffs) }
    self.cutoffs[#self.cutoffs + 1] = n_token
    self.cutoff_ends = { 0, unpack(self.cutoffs) }
    self.div_val = div_val
    -- self.shortlist_size = self.cutoffs[0]
    self.shortlist_size = self.cutoffs[1]
    -- self.n_clusters = len(self.cutoffs) - 1
    self.n_clusters = #self.cutoffs - 1
    self.head_size = self.shortlist_size + self.n_clusters
    if self.n_clusters > 0 then
        -- self.cluster_weight = nn.Parameter(torch.zeros(self.n_clusters, self.d_embed))
        self.cluster_weight = nn.Parameter(tide.zeros(self.n_clusters, self.d_embed))
        self.cluster_bias = nn.Parameter(tide.zeros(self.n_clusters))
    end
    self.out_layers = nn.ModuleList()
    self.out_projs = nn.ParameterList()
    if div_val == 1 then
        for _ = 1, #self.cutoffs do
            if d_proj ~= d_embed then
                self.out_projs:append(nn.Parameter(tide.Tensor(d_proj, d_embed)))
            else
                -- self.out_projs.append(None)
                -- GAP: ParameterList:append(nil) raises (`tide: ParameterList:append: expected a
                -- tensor, got nil`); PyTorch's stores None. Nothing is appended: out_proj() reads
                -- a missing entry as None.
            end
        end
        self.out_layers:append(nn.Linear(d_embed, n_token))
    end
    self.keep_order = keep_order or false
end

-- self.out_projs[i], None where PyTorch appended None (see the GAP above)
function ProjectedAdaptiveLogSoftmax:out_proj(i)
    if i <= #self.out_projs then return self.out_projs[i] end
    return nil
end

-- def _compute_logit(self, hidden, weight, bias, proj):
function ProjectedAdaptiveLogSoftmax:_compute_logit(hidden, weight, bias, proj)
    local logit
    if proj == nil then
        -- logit = F.linear(hidden, weight, bias=bias)
        logit = F.linear(hidden, weight, bias)
    else
        -- proj_hid = F.linear(hidden, proj.t().contiguous())
        local proj_hid = F.linear(hidden, proj:t():contiguous())
        logit = F.linear(proj_hid, weight, bias)
    end
    return logit
end

-- def forward(self, hidden, target, keep_order=False):
function ProjectedAdaptiveLogSoftmax:forward(hidden, target, keep_order)
    -- hidden :: [len*bsz x d_proj], target :: [len*bsz]
    if hidden:size(1) ~= target:size(1) then
        error("Input and target should have the same size in the batch dimension.")
    end
    local nll
    if self.n_clusters == 0 then
        -- logit = self._compute_logit(hidden, self.out_layers[0].weight,
        --                             self.out_layers[0].bias, self.out_projs[0])
        local logit = self:_compute_logit(hidden, self.out_layers[1].weight,
            self.out_layers[1].bias, self:out_proj(1))
        -- nll = -F.log_softmax(logit, dim=-1) \
        --         .gather(1, target.unsqueeze(1)).squeeze(1)
        nll = -F.log_softmax(logit, -1):gather(2, target:unsqueeze(2)):squeeze(2)
    else
        -- construct weights and biases
        local weights, biases = {}, {}
        -- for i in range(len(self.cutoffs)):
        for i = 1, #self.cutoffs do
            local weight_i, bias_i
            if self.div_val == 1 then
                -- l_idx, r_idx = self.cutoff_ends[i], self.cutoff_ends[i + 1]
                local l_idx, r_idx = self.cutoff_ends[i], self.cutoff_ends[i + 1]
                -- weight_i = self.out_layers[0].weight[l_idx:r_idx]
                weight_i = self.out_layers[1].weight[{ { l_idx + 1, r_idx } }]
                bias_i = self.out_layers[1].bias[{ { l_idx + 1, r_idx } }]
            else
                weight_i = self.out_layers[i].weight
                bias_i = self.out_layers[i].bias
            end
            if i == 1 then
                -- weight_i = torch.cat([weight_i, self.cluster_weight], dim=0)
                weight_i = tide.cat({ weight_i, self.cluster_weight }, 1)
                bias_i = tide.cat({ bias_i, self.cluster_bias }, 1)
            end
            weights[#weights + 1] = weight_i
            biases[#biases + 1] = bias_i
        end
        -- head_weight, head_bias, head_proj = weights[0], biases[0], self.out_projs[0]
        local head_weight, head_bias, head_proj = weights[1], biases[1], self:out_proj(1)
        local head_logit = self:_compute_logit(hidden, head_weight, head_bias, head_proj)
        -- head_logprob = F.log_softmax(head_logit, dim=1)
        local head_logprob = F.log_softmax(head_logit, 2)
        -- nll = torch.zeros_like(target, dtype=hidden.dtype, device=hidden.device)
        nll = tide.zeros_like(target, { dtype = hidden.dtype, device = hidden.device })
        local offset = 0
        -- cutoff_values = [0] + self.cutoffs
        local cutoff_values = { 0, unpack(self.cutoffs) }
        -- for i in range(len(cutoff_values) - 1):  (i is PyTorch's 0-based i here)
        for i = 0, #cutoff_values - 2 do
            -- l_idx, r_idx = cutoff_values[i], cutoff_values[i + 1]
            -- (tide's targets are 1-based: target - 1 is PyTorch's)
            local l_idx, r_idx = cutoff_values[i + 1], cutoff_values[i + 2]
            -- mask_i = (target >= l_idx) & (target < r_idx)
            local mask_i = (target - 1):ge(l_idx):logical_and((target - 1):lt(r_idx))
            -- indices_i = mask_i.nonzero().squeeze()
            local indices_i = mask_i:nonzero():squeeze()
            if indices_i:numel() ~= 0 then
                -- target_i = target.index_select(0, indices_i) - l_idx
                local target_i = target:index_select(1, indices_i) - l_idx
                local head_logprob_i = head_logprob:index_select(1, indices_i)
                local logprob_i
                if i == 0 then
                    -- logprob_i = head_logprob_i.gather(1, target_i[:,None]).squeeze(1)
                    logprob_i = head_logprob_i:gather(2, target_i[{ {}, tide.newaxis }]):squeeze(2)
                else
                    -- weight_i, bias_i, proj_i = weights[i], biases[i], self.out_projs[i]
                    local weight_i, bias_i, proj_i = weights[i + 1], biases[i + 1],
                        self:out_proj(i + 1)
                    local hidden_i = hidden:index_select(1, indices_i)
                    local tail_logit_i = self:_compute_logit(hidden_i, weight_i, bias_i, proj_i)
                    local tail_logprob_i = F.log_softmax(tail_logit_i, 2)
                    -- logprob_i = head_logprob_i[:, -i] \
                    --           + tail_logprob_i.gather(1, target_i[:,None]).squeeze(1)
                    logprob_i = head_logprob_i[{ {}, -i }]
                        + tail_logprob_i:gather(2, target_i[{ {}, tide.newaxis }]):squeeze(2)
                end
                -- if (hasattr(self, 'keep_order') and self.keep_order) or keep_order:
                if self.keep_order or keep_order then
                    -- nll.index_copy_(0, indices_i, -logprob_i)
                    nll:index_copy_(1, indices_i, -logprob_i)
                else
                    -- nll[offset:offset+logprob_i.size(0)].copy_(-logprob_i)
                    nll[{ { offset + 1, offset + logprob_i:size(1) } }]:copy_(-logprob_i)
                end
                offset = offset + logprob_i:size(1)
            end
        end
    end
    return nll
end

-- class MemTransformerLM(nn.Module):
local MemTransformerLM = nn.Module:extend("MemTransformerLM")
-- def __init__(self, n_token, n_layer, n_head, d_model, d_head, d_inner,
--              dropout, dropatt, tie_weight=True, d_embed=None,
--              div_val=1, tie_projs=[False], pre_lnorm=False,
--              tgt_len=None, ext_len=None, mem_len=None,
--              cutoffs=[], adapt_inp=False,
--              same_length=False, attn_type=0, clamp_len=-1,
--              sample_softmax=-1):
function MemTransformerLM:init(n_token, n_layer, n_head, d_model, d_head, d_inner, dropout,
                               dropatt, o)
    o = o or {}
    local tie_weight = o.tie_weight == nil or o.tie_weight
    local div_val, tie_projs, cutoffs = o.div_val or 1, o.tie_projs or { false }, o.cutoffs or {}
    local attn_type, sample_softmax = o.attn_type or 0, o.sample_softmax or -1
    self.n_token = n_token
    -- d_embed = d_model if d_embed is None else d_embed
    local d_embed = o.d_embed or d_model
    self.d_embed = d_embed
    self.d_model = d_model
    self.n_head = n_head
    self.d_head = d_head
    -- self.word_emb = AdaptiveEmbedding(n_token, d_embed, d_model, cutoffs, div_val=div_val)
    self.word_emb = AdaptiveEmbedding(n_token, d_embed, d_model, cutoffs, div_val)
    self.drop = nn.Dropout(dropout)
    self.n_layer = n_layer
    self.tgt_len = o.tgt_len
    self.mem_len = o.mem_len
    self.ext_len = o.ext_len
    self.max_klen = o.tgt_len + o.ext_len + o.mem_len
    self.attn_type = attn_type
    self.layers = nn.ModuleList()
    assert(attn_type == 0, "only attn_type 0 is ported")
    -- for i in range(n_layer):
    for _ = 1, n_layer do
        self.layers:append(
            RelPartialLearnableDecoderLayer(
                n_head, d_model, d_head, d_inner, dropout,
                -- tgt_len=tgt_len, ext_len=ext_len, mem_len=mem_len,
                -- dropatt=dropatt, pre_lnorm=pre_lnorm)
                { tgt_len = o.tgt_len, ext_len = o.ext_len, mem_len = o.mem_len,
                    dropatt = dropatt, pre_lnorm = o.pre_lnorm })
        )
    end
    self.sample_softmax = sample_softmax
    assert(sample_softmax <= 0, "sample_softmax is not ported")
    -- use adaptive softmax (including standard softmax)
    -- self.crit = ProjectedAdaptiveLogSoftmax(n_token, d_embed, d_model,
    --                                         cutoffs, div_val=div_val)
    self.crit = ProjectedAdaptiveLogSoftmax(n_token, d_embed, d_model, cutoffs, div_val)
    if tie_weight then
        -- for i in range(len(self.crit.out_layers)):
        for i = 1, #self.crit.out_layers do
            self.crit.out_layers[i].weight = self.word_emb.emb_layers[i].weight
        end
    end
    -- for i, tie_proj in enumerate(tie_projs):
    for i, tie_proj in ipairs(tie_projs) do
        if tie_proj and div_val == 1 and d_model ~= d_embed then
            -- self.crit.out_projs[i] = self.word_emb.emb_projs[0]
            self.crit.out_projs[i] = self.word_emb.emb_projs[1]
        elseif tie_proj and div_val ~= 1 then
            self.crit.out_projs[i] = self.word_emb.emb_projs[i]
        end
    end
    self.same_length = o.same_length or false
    self.clamp_len = o.clamp_len or -1
    self:_create_params()
end

function MemTransformerLM:_create_params()
    if self.attn_type == 0 then -- default attention
        self.pos_emb = PositionalEmbedding(self.d_model)
        -- self.r_w_bias = nn.Parameter(torch.Tensor(self.n_head, self.d_head))
        self.r_w_bias = nn.Parameter(tide.Tensor(self.n_head, self.d_head))
        self.r_r_bias = nn.Parameter(tide.Tensor(self.n_head, self.d_head))
    end
end

function MemTransformerLM:init_mems()
    if self.mem_len > 0 then
        local mems = {}
        -- param = next(self.parameters())
        local param = self:parameters()[1]
        -- for i in range(self.n_layer+1):
        for _ = 1, self.n_layer + 1 do
            -- empty = torch.empty(0, dtype=param.dtype, device=param.device)
            local empty = tide.empty(0, { dtype = param.dtype, device = param.device })
            mems[#mems + 1] = empty
        end
        return mems
    else
        return nil
    end
end

-- def _update_mems(self, hids, mems, qlen, mlen):
function MemTransformerLM:_update_mems(hids, mems, qlen, mlen)
    -- does not deal with None
    if mems == nil then return nil end
    -- assert len(hids) == len(mems), 'len(hids) != len(mems)'
    assert(#hids == #mems, "len(hids) != len(mems)")
    -- with torch.no_grad():
    return tide.no_grad(function()
        local new_mems = {}
        -- end_idx = mlen + max(0, qlen - 0 - self.ext_len)
        local end_idx = mlen + math.max(0, qlen - 0 - self.ext_len)
        local beg_idx = math.max(0, end_idx - self.mem_len)
        -- for i in range(len(hids)):
        for i = 1, #hids do
            -- cat = torch.cat([mems[i], hids[i]], dim=0)
            local cat = tide.cat({ mems[i], hids[i] }, 1)
            -- new_mems.append(cat[beg_idx:end_idx].detach())
            new_mems[#new_mems + 1] = cat[{ { beg_idx + 1, end_idx } }]:detach()
        end
        return new_mems
    end)
end

-- def _forward(self, dec_inp, mems=None):
function MemTransformerLM:_forward(dec_inp, mems)
    -- qlen, bsz = dec_inp.size()
    local qlen = dec_inp:size(1)
    local word_emb = self.word_emb(dec_inp)
    -- mlen = mems[0].size(0) if mems is not None else 0
    local mlen = mems ~= nil and mems[1]:size(1) or 0
    local klen = mlen + qlen
    local dec_attn_mask
    if self.same_length then
        error("same_length is not ported")
    else
        -- dec_attn_mask = torch.triu(
        --     word_emb.new_ones(qlen, klen), diagonal=1+mlen).byte()[:,:,None]
        -- (tide's masked_fill takes a bool mask, PyTorch 1.13's a deprecated uint8 one too)
        dec_attn_mask = tide.triu(
            word_emb:new_ones(qlen, klen), 1 + mlen):bool()[{ {}, {}, tide.newaxis }]
    end

    local hids = {}
    -- pos_seq = torch.arange(klen-1, -1, -1.0, device=word_emb.device,
    --                        dtype=word_emb.dtype)
    local pos_seq = tide.arange(klen - 1, -1, -1.0, { device = word_emb.device,
        dtype = word_emb.dtype })
    if self.clamp_len > 0 then
        -- pos_seq.clamp_(max=self.clamp_len)
        pos_seq:clamp_(nil, self.clamp_len)
    end
    local pos_emb = self.pos_emb(pos_seq)

    local core_out = self.drop(word_emb)
    pos_emb = self.drop(pos_emb)

    hids[#hids + 1] = core_out
    -- for i, layer in enumerate(self.layers):
    for i, layer in ipairs(self.layers) do
        -- mems_i = None if mems is None else mems[i]
        local mems_i = mems ~= nil and mems[i] or nil
        -- core_out = layer(core_out, pos_emb, self.r_w_bias,
        --         self.r_r_bias, dec_attn_mask=dec_attn_mask, mems=mems_i)
        core_out = layer(core_out, pos_emb, self.r_w_bias, self.r_r_bias, dec_attn_mask, mems_i)
        hids[#hids + 1] = core_out
    end

    core_out = self.drop(core_out)
    -- (the arguments in mem_transformer.py's order: mlen, qlen into qlen, mlen; with ext_len 0
    -- _update_mems gives the same slice either way)
    local new_mems = self:_update_mems(hids, mems, mlen, qlen)
    return core_out, new_mems
end

-- def forward(self, data, target, *mems):
function MemTransformerLM:forward(data, target, ...)
    local mems = { ... }
    -- if not mems: mems = self.init_mems()
    if #mems == 0 then mems = self:init_mems() end
    -- tgt_len = target.size(0)
    local tgt_len = target:size(1)
    local hidden, new_mems = self:_forward(data, mems)
    -- pred_hid = hidden[-tgt_len:]
    local pred_hid = hidden[{ { -tgt_len, -1 } }]
    -- loss = self.crit(pred_hid.view(-1, pred_hid.size(-1)), target.view(-1))
    local loss = self.crit(pred_hid:view(-1, pred_hid:size(-1)), target:view(-1))
    loss = loss:view(tgt_len, -1)
    if new_mems == nil then
        return { loss }
    else
        -- return [loss] + new_mems
        return { loss, unpack(new_mems) }
    end
end

---------------------------------------------------------------------------------------------
-- the check
---------------------------------------------------------------------------------------------
-- every parameter, in named_parameters order (k = 0, 1, ...), set from a fixed formula:
-- p.copy_((0.3 * torch.sin(0.731 * torch.arange(p.numel()) + 1.37 * k)).view(p.shape))
local function fill_from_formula(model)
    tide.no_grad(function()
        for k, np in ipairs(model:named_parameters()) do
            local p = np[2]
            local v = (tide.arange(p:numel()):float() * 0.731 + 1.37 * (k - 1)):sin() * 0.3
            p:copy_(v:view(p.shape))
        end
    end)
end

local function build(pre_lnorm, cutoffs)
    -- MemTransformerLM(20, 2, 2, 8, 4, 16, 0.0, 0.0, pre_lnorm=pre, tgt_len=4, ext_len=0,
    --                  mem_len=4, cutoffs=[], div_val=1)
    local m = MemTransformerLM(20, 2, 2, 8, 4, 16, 0.0, 0.0, { pre_lnorm = pre_lnorm,
        tgt_len = 4, ext_len = 0, mem_len = 4, cutoffs = cutoffs or {}, div_val = 1 })
    fill_from_formula(m)
    return m
end

-- Python's [[3, 17], [5, 0], [19, 8], [2, 11]] and so on, plus one
local DATA1 = { { 4, 18 }, { 6, 1 }, { 20, 9 }, { 3, 12 } }
local TGT1 = { { 6, 1 }, { 20, 9 }, { 3, 12 }, { 8, 5 } }
local DATA2 = { { 8, 5 }, { 2, 14 }, { 7, 10 }, { 15, 3 } }
local TGT2 = { { 2, 14 }, { 7, 10 }, { 15, 3 }, { 11, 4 } }
local function long(t) return tide.tensor(t, { dtype = "int64" }) end

-- PyTorch 1.13's values (ref script: the model above, eval mode, the formula's weights)
local WANT = {
    [false] = {
        loss1 = 24.5196, loss1_b0 = { 2.75768, 3.01307, 3.05093, 2.85876 },
        mems1 = { -1.07676, -3.50222, 4.95282 },
        mems1_last = { 0.24130785, 0.36381713, 0.31369665 },
        loss2 = 25.33225, loss2_b1 = { 3.37727, 3.40857, 3.06066, 3.00324 },
        mems2 = { -0.62507, -4.05908, 5.11189 },
    },
    [true] = {
        loss1 = 26.24345, loss1_b0 = { 2.35666, 2.32667, 3.33335, 3.45288 },
        mems1 = { -1.07676, 0.66249, 4.84829 },
        mems1_last = { -0.75503844, -0.36552155, 0.0907587 },
        loss2 = 31.5653, loss2_b1 = { 4.9961, 3.37233, 4.19538, 2.59949 },
        mems2 = { -0.62507, 0.51981, 4.44511 },
    },
}

local function sums(list, from)
    local out = {}
    for i = from, #list do out[#out + 1] = list[i]:sum():item() end
    return out
end

describe("kimiyoung/transformer-xl mem_transformer.py (MemTransformerLM, attn_type 0)", function()
    it("_rel_shift shifts each row as PyTorch's", function()
        -- x = torch.arange(24.).view(2, 3, 2, 2); RelMultiHeadAttn._rel_shift(None, x)
        local x = tide.arange(24.):view(2, 3, 2, 2)
        local y = RelMultiHeadAttn._rel_shift(nil, x)
        assert.are.same({ 2, 3, 2, 2 }, y.shape)
        assert.are.same({ 4, 5, 6, 7, 8, 9, 10, 11, 0, 0, 0, 0, 12, 13, 14, 15, 16, 17, 18, 19,
            20, 21, 22, 23 }, y:flatten():tolist())
    end)

    it("names its parameters as PyTorch, the tied output weight once", function()
        local m = build(false)
        local names = {}
        for _, np in ipairs(m:named_parameters()) do names[#names + 1] = np[1] end
        assert.are.equal(26, #names)
        assert.are.same({ "r_w_bias", "r_r_bias", "word_emb.emb_layers.1.weight",
            "layers.1.dec_attn.qkv_net.weight" }, { unpack(names, 1, 4) })
        assert.are.equal("crit.out_layers.1.bias", names[26])
        assert.are.equal(m.word_emb.emb_layers[1].weight, m.crit.out_layers[1].weight)
    end)

    it("masks with a 2-D and a 3-D attn_mask as PyTorch's", function()
        -- attn = RelPartialLearnableMultiHeadAttn(2, 8, 4, 0.0, dropatt=0)
        local attn = RelPartialLearnableMultiHeadAttn(2, 8, 4, 0.0, { dropatt = 0 })
        fill_from_formula(attn)
        -- w = torch.arange(16.).view(2, 1, 8).sin(); r = torch.arange(16.).view(2, 1, 8).cos()
        local w = tide.arange(16.):view(2, 1, 8):sin()
        local r = tide.arange(16.):view(2, 1, 8):cos()
        local bias = tide.ones(2, 4) * 0.1
        -- mask = torch.triu(torch.ones(2, 2), 1).byte()
        local mask = tide.triu(tide.ones(2, 2), 1):bool()
        -- o2 = attn(w, r, bias, bias, mask)
        -- (mem_transformer.py's mask[None,:,:,None] lines the mask up with klen x bsz, so the
        -- result broadcasts to bsz 2, as PyTorch's)
        local o2 = attn(w, r, bias, bias, mask)
        assert.are.same({ 2, 2, 8 }, o2.shape)
        assert_close_list({ -0.31068, -0.30714, -0.22491, 0.17124, -0.20902, -0.26345, 0.10477,
            0.40586 }, o2[{ {}, 2, { 1, 4 } }]:flatten():tolist(), 1e-4, "2-D mask")
        -- o3 = attn(w, r, bias, bias, mask[:, :, None])
        local o3 = attn(w, r, bias, bias, mask[{ {}, {}, tide.newaxis }])
        assert.are.same({ 2, 1, 8 }, o3.shape)
        assert_close_list({ -0.17325, -0.42454, -0.48092, 0.01879, -0.06357, -0.35619, 0.00985,
            0.45701 }, o3[{ {}, 1, { 1, 4 } }]:flatten():tolist(), 1e-4, "3-D mask")
    end)

    for _, pre in ipairs({ false, true }) do
        it("loss and mems of two segments match PyTorch (pre_lnorm " .. tostring(pre) .. ")",
            function()
                local m = build(pre)
                m:eval()
                local want = WANT[pre]
                tide.no_grad(function()
                    local ret = m(long(DATA1), long(TGT1))
                    assert.are.equal(4, #ret)
                    assert.are.same({ 4, 2 }, ret[1].shape)
                    assert_close_list({ want.loss1 }, { ret[1]:sum():item() }, 1e-4, "loss1")
                    assert_close_list(want.loss1_b0, ret[1][{ {}, 1 }]:tolist(), 1e-4, "loss1")
                    assert.are.same({ 4, 2, 8 }, ret[2].shape)
                    assert_close_list(want.mems1, sums(ret, 2), 1e-4, "mems1")
                    assert_close_list(want.mems1_last, ret[4][{ -1, 2, { 1, 3 } }]:tolist(), 1e-4,
                        "mems1[2]")
                    -- ret2 = m(data2, tgt2, *ret[1:])
                    local ret2 = m(long(DATA2), long(TGT2), unpack(ret, 2))
                    assert_close_list({ want.loss2 }, { ret2[1]:sum():item() }, 1e-4, "loss2")
                    assert_close_list(want.loss2_b1, ret2[1][{ {}, 2 }]:tolist(), 1e-4, "loss2")
                    assert_close_list(want.mems2, sums(ret2, 2), 1e-4, "mems2")
                end)
            end)
    end

    it("the adaptive softmax with one cutoff matches PyTorch (keep_order both ways)", function()
        -- cutoffs=[10]: a head of 10 tokens plus one cluster, a tail of 10
        local m = build(false, { 10 })
        local names = m:named_parameters()
        assert.are.equal("crit.cluster_weight", names[#names - 2][1])
        m:eval()
        tide.no_grad(function()
            local ret = m(long(DATA1), long(TGT1))
            -- nll in cluster order (keep_order False): the head's targets, then the tail's
            assert_close_list({ 2.20328, 2.69907, 3.04175, 2.01625, 2.88424, 1.95049, 4.66314,
                5.35131 }, ret[1]:flatten():tolist(), 1e-4, "loss1")
            local ret2 = m(long(DATA2), long(TGT2), unpack(ret, 2))
            assert_close_list({ 2.35708, 2.58251, 2.96519, 2.02177, 1.85587, 5.17893, 5.26819,
                5.41475 }, ret2[1]:flatten():tolist(), 1e-4, "loss2")
            -- m.crit.keep_order = True: each nll at its target's place
            m.crit.keep_order = true
            ret2 = m(long(DATA2), long(TGT2), unpack(ret, 2))
            assert_close_list({ 2.35708, 5.17893, 2.58251, 2.96519, 5.26819, 2.02177, 5.41475,
                1.85587 }, ret2[1]:flatten():tolist(), 1e-4, "loss2 kept in order")
        end)
    end)

    -- PyTorch's losses for the same loop (torch.optim.Adam(m.parameters(), lr=0.01), train mode,
    -- dropout 0): the gradients through the rel-shift, the mems and the adaptive softmax
    local TRAIN_WANT = {
        { 3.06495, 3.18608, 2.9786, 3.1454, 2.94991, 3.11516 },
        { 3.10119, 3.41398, 3.01499, 3.30431, 2.98272, 3.23105 },
    }
    for c, cutoffs in ipairs({ {}, { 10 } }) do
        it("trains over segments with the memories carried (train.py's loop), cutoffs {"
            .. table.concat(cutoffs, ", ") .. "}", function()
            local model = build(false, cutoffs)
            model:train()
            -- optimizer = optim.Adam(model.parameters(), lr=args.lr)
            local optimizer = optim.Adam(model:parameters(), { lr = 0.01 })
            local segs = { { DATA1, TGT1 }, { DATA2, TGT2 } }
            local losses = {}
            for _ = 1, 3 do
                -- mems = tuple()
                local mems = {}
                for _, seg in ipairs(segs) do
                    model:zero_grad()
                    -- ret = para_model(data, target, *mems)
                    local ret = model(long(seg[1]), long(seg[2]), unpack(mems))
                    -- loss, mems = ret[0], ret[1:]
                    local loss = ret[1]
                    mems = { unpack(ret, 2) }
                    -- loss = loss.float().mean().type_as(loss)
                    loss = loss:float():mean():type_as(loss)
                    loss:backward()
                    optimizer:step()
                    assert.is_false(mems[1].requires_grad)
                    losses[#losses + 1] = loss:item()
                end
            end
            for i, l in ipairs(losses) do assert_finite(l, "loss " .. i) end
            -- each segment's loss falls from one pass to the next
            assert.is_true(losses[5] < losses[1] and losses[6] < losses[2],
                table.concat(losses, ", "))
            assert_close_list(TRAIN_WANT[c], losses, 1e-4, "losses")
        end)
    end
end)
