-- ported_scripts91_spec.lua — mlfoundations/open_clip's src/open_clip/loss.py (gather_features,
-- ClipLoss with its label cache, CoCaLoss, DistillClipLoss, SigLipLoss) and
-- src/open_clip/transformer.py (with layers.py: LayerNormFp32, LayerNorm, QuickGELU, LayerScale;
-- Attention with scaled cosine attention and head_scale, AttentionalPooler,
-- ResidualAttentionBlock, Transformer), ported line for line at tiny sizes (batch 4, embed dim
-- 6, width 8, heads 2), plus a few AdamW steps of a two-tower model trained with ClipLoss.
-- The Python line stands above each Lua line that differs from it. Class targets are 1-based:
-- get_ground_truth's torch.arange(n) is tide.arange(1, n + 1), CoCa's pad_id 0 is token 1.
-- Only world_size 1 is ported: gather_features' all_gather and SigLipLoss's neighbour exchange
-- (torch.distributed P2P) run on several ranks only, and at world_size 1 neither runs.
-- PyTorch 1.13 (the reference) has no F.scaled_dot_product_attention, so its values come from
-- Attention's manual path (use_sdpa=False); tide runs both paths and they agree.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

local function list(t)
    return t:detach():reshape(-1):tolist()
end

---------------------------------------------------------------------------------------------
-- 1. src/open_clip/loss.py
---------------------------------------------------------------------------------------------
-- def gather_features(image_features, text_features, local_loss=False, gather_with_grad=False,
--                     rank=0, world_size=1):
local function gather_features(image_features, text_features, opts)
    opts = opts or {}
    local world_size, rank = opts.world_size or 1, opts.rank or 0
    -- (world_size > 1 runs only under mpirun: gather_with_grad's
    -- torch.distributed.nn.all_gather is tide.distributed.nn.all_gather, checked in
    -- spec/dist/collectives_mpi.lua.) At world_size 1 the list holds the local features
    -- (gathered[rank] = features) and the cat of one is a copy.
    -- gathered_image_features = [torch.zeros_like(image_features) for _ in range(world_size)]
    local gathered_image_features, gathered_text_features = {}, {}
    for r = 1, world_size do
        gathered_image_features[r] = tide.zeros_like(image_features)
        gathered_text_features[r] = tide.zeros_like(text_features)
    end
    assert(world_size == 1, "gather_features: only world_size 1 is ported")
    -- if not local_loss: gathered_image_features[rank] = image_features
    if not opts.local_loss then
        gathered_image_features[rank + 1] = image_features
        gathered_text_features[rank + 1] = text_features
    end
    -- all_image_features = torch.cat(gathered_image_features, dim=0)
    local all_image_features = tide.cat(gathered_image_features, 1)
    local all_text_features = tide.cat(gathered_text_features, 1)
    return all_image_features, all_text_features
end

-- class ClipLoss(nn.Module):
local ClipLoss = nn.Module:extend("ClipLoss")
-- def __init__(self, local_loss=False, gather_with_grad=False, cache_labels=False, rank=0,
--              world_size=1):
function ClipLoss:init(opts)
    opts = opts or {}
    self.local_loss = opts.local_loss or false
    self.gather_with_grad = opts.gather_with_grad or false
    self.cache_labels = opts.cache_labels or false
    self.rank = opts.rank or 0
    self.world_size = opts.world_size or 1
    -- cache state
    self.prev_num_logits = 0
    self.labels = {}
end

-- def get_ground_truth(self, device, num_logits) -> torch.Tensor:
function ClipLoss:get_ground_truth(device, num_logits)
    local labels
    -- if self.prev_num_logits != num_logits or device not in self.labels:
    if self.prev_num_logits ~= num_logits or self.labels[device] == nil then
        -- labels = torch.arange(num_logits, device=device, dtype=torch.long)
        labels = tide.arange(1, num_logits + 1, { device = device, dtype = tide.long })
        if self.world_size > 1 and self.local_loss then
            labels = labels + num_logits * self.rank
        end
        if self.cache_labels then
            self.labels[device] = labels
            self.prev_num_logits = num_logits
        end
    else
        labels = self.labels[device]
    end
    return labels
end

-- def get_logits(self, image_features, text_features, logit_scale, logit_bias=None):
function ClipLoss:get_logits(image_features, text_features, logit_scale, logit_bias)
    local logits_per_image, logits_per_text
    if self.world_size > 1 then
        local all_image_features, all_text_features = gather_features(image_features,
            text_features, { local_loss = self.local_loss, gather_with_grad = self.gather_with_grad,
                rank = self.rank, world_size = self.world_size })
        if self.local_loss then
            logits_per_image = logit_scale * image_features:matmul(all_text_features.T)
            logits_per_text = logit_scale * text_features:matmul(all_image_features.T)
        else
            logits_per_image = logit_scale * all_image_features:matmul(all_text_features.T)
            logits_per_text = logits_per_image.T
        end
    else
        -- logits_per_image = logit_scale * image_features @ text_features.T
        logits_per_image = logit_scale * image_features:matmul(text_features.T)
        logits_per_text = logit_scale * text_features:matmul(image_features.T)
    end
    if logit_bias ~= nil then
        -- logits_per_image += logit_bias
        logits_per_image = logits_per_image + logit_bias
        logits_per_text = logits_per_text + logit_bias
    end
    return logits_per_image, logits_per_text
end

-- def forward(self, image_features, text_features, logit_scale, logit_bias=None,
--             output_dict=False):
function ClipLoss:forward(image_features, text_features, logit_scale, logit_bias, output_dict)
    local device = image_features.device
    local logits_per_image, logits_per_text = self:get_logits(image_features, text_features,
        logit_scale, logit_bias)
    -- labels = self.get_ground_truth(device, logits_per_image.shape[0])
    local labels = self:get_ground_truth(device, logits_per_image.shape[1])
    local total_loss = (F.cross_entropy(logits_per_image, labels) +
        F.cross_entropy(logits_per_text, labels)) / 2
    -- return {"contrastive_loss": total_loss} if output_dict else total_loss
    if output_dict then return { contrastive_loss = total_loss } end
    return total_loss
end

-- class CoCaLoss(ClipLoss):
local CoCaLoss = ClipLoss:extend("CoCaLoss")
-- def __init__(self, caption_loss_weight, clip_loss_weight, pad_id=0, local_loss=False, ...):
function CoCaLoss:init(caption_loss_weight, clip_loss_weight, opts)
    opts = opts or {}
    -- super().__init__(local_loss=local_loss, ...)
    ClipLoss.init(self, opts)
    self.clip_loss_weight = clip_loss_weight
    self.caption_loss_weight = caption_loss_weight
    -- self.caption_loss = nn.CrossEntropyLoss(ignore_index=pad_id)  (pad_id=0: token 1 here)
    self.caption_loss = nn.CrossEntropyLoss({ ignore_index = opts.pad_id or 1 })
end

-- def forward(self, image_features, text_features, logits, labels, logit_scale,
--             output_dict=False):
function CoCaLoss:forward(image_features, text_features, logits, labels, logit_scale, output_dict)
    local clip_loss
    -- if self.clip_loss_weight:  (Python's 0 is false)
    if self.clip_loss_weight ~= 0 then
        -- clip_loss = super().forward(image_features, text_features, logit_scale)
        clip_loss = ClipLoss.forward(self, image_features, text_features, logit_scale)
        clip_loss = self.clip_loss_weight * clip_loss
    else
        -- clip_loss = torch.tensor(0, device=logits.device)
        clip_loss = tide.tensor(0, { device = logits.device })
    end
    -- caption_loss = self.caption_loss(logits.permute(0, 2, 1), labels)
    local caption_loss = self.caption_loss(logits:permute(1, 3, 2), labels)
    caption_loss = caption_loss * self.caption_loss_weight
    if output_dict then
        return { contrastive_loss = clip_loss, caption_loss = caption_loss }
    end
    return clip_loss, caption_loss
end

-- class DistillClipLoss(ClipLoss):
local DistillClipLoss = ClipLoss:extend("DistillClipLoss")

function DistillClipLoss:dist_loss(teacher_logits, student_logits)
    -- return -(teacher_logits.softmax(dim=1) * student_logits.log_softmax(dim=1))
    --     .sum(dim=1).mean(dim=0)
    return -(teacher_logits:softmax({ dim = 2 }) * student_logits:log_softmax({ dim = 2 }))
        :sum({ dim = 2 }):mean({ dim = 1 })
end

function DistillClipLoss:forward(image_features, text_features, logit_scale,
                                 dist_image_features, dist_text_features, dist_logit_scale,
                                 output_dict)
    local logits_per_image, logits_per_text =
        self:get_logits(image_features, text_features, logit_scale)
    local dist_logits_per_image, dist_logits_per_text =
        self:get_logits(dist_image_features, dist_text_features, dist_logit_scale)
    local labels = self:get_ground_truth(image_features.device, logits_per_image.shape[1])
    local contrastive_loss = (F.cross_entropy(logits_per_image, labels) +
        F.cross_entropy(logits_per_text, labels)) / 2
    local distill_loss = (self:dist_loss(dist_logits_per_image, logits_per_image) +
        self:dist_loss(dist_logits_per_text, logits_per_text)) / 2
    if output_dict then
        return { contrastive_loss = contrastive_loss, distill_loss = distill_loss }
    end
    return contrastive_loss, distill_loss
end

-- class SigLipLoss(nn.Module):
local SigLipLoss = nn.Module:extend("SigLipLoss")
-- def __init__(self, cache_labels=False, rank=0, world_size=1, dist_impl=None, chunk_size=0):
function SigLipLoss:init(opts)
    opts = opts or {}
    self.cache_labels = opts.cache_labels or false
    self.rank = opts.rank or 0
    self.world_size = opts.world_size or 1
    -- self.dist_impl = dist_impl or 'bidir'
    self.dist_impl = opts.dist_impl or "bidir"
    -- assert self.dist_impl in ('bidir', 'shift', 'reduce', 'gather')
    local ok = { bidir = true, shift = true, reduce = true, gather = true }
    assert(ok[self.dist_impl])
    self.prev_num_logits = 0
    self.labels = {}
end

-- def get_ground_truth(self, device, dtype, num_logits, negative_only=False) -> torch.Tensor:
function SigLipLoss:get_ground_truth(device, dtype, num_logits, negative_only)
    -- labels = -torch.ones((num_logits, num_logits), device=device, dtype=dtype)
    local labels = -tide.ones({ num_logits, num_logits }, { device = device, dtype = dtype })
    if not negative_only then
        -- labels = 2 * torch.eye(num_logits, device=device, dtype=dtype) + labels
        labels = 2 * tide.eye(num_logits, { device = device, dtype = dtype }) + labels
    end
    return labels
end

function SigLipLoss:get_logits(image_features, text_features, logit_scale, logit_bias)
    local logits = logit_scale * image_features:matmul(text_features.T)
    if logit_bias ~= nil then
        -- logits += logit_bias
        logits = logits + logit_bias
    end
    return logits
end

function SigLipLoss:_loss(image_features, text_features, logit_scale, logit_bias, negative_only)
    local logits = self:get_logits(image_features, text_features, logit_scale, logit_bias)
    local labels = self:get_ground_truth(image_features.device, image_features.dtype,
        image_features.shape[1], negative_only)
    -- loss = -F.logsigmoid(labels * logits).sum() / image_features.shape[0]
    local loss = -F.logsigmoid(labels * logits):sum() / image_features.shape[1]
    return loss
end

function SigLipLoss:forward(image_features, text_features, logit_scale, logit_bias, output_dict)
    local loss = self:_loss(image_features, text_features, logit_scale, logit_bias)
    -- GAP: world_size > 1 exchanges text features with the neighbour ranks
    -- (neighbour_exchange_bidir_with_grad: P2POp isend/irecv in an autograd.Function);
    -- tide.distributed has collectives only, no point-to-point send/recv (needs C). At
    -- world_size 1 none of the bidir/shift/reduce/gather loops runs.
    assert(self.world_size == 1, "SigLipLoss: only world_size 1 is ported")
    if output_dict then return { contrastive_loss = loss } end
    return loss
end

---------------------------------------------------------------------------------------------
-- 2. src/open_clip/layers.py and src/open_clip/transformer.py
---------------------------------------------------------------------------------------------
-- class LayerNormFp32(nn.LayerNorm):
local LayerNormFp32 = nn.LayerNorm:extend("LayerNormFp32")
function LayerNormFp32:forward(x)
    local orig_type = x.dtype
    -- x = F.layer_norm(x.to(torch.float32), self.normalized_shape, self.weight, self.bias,
    --                  self.eps)
    x = F.layer_norm(x:to(tide.float32), self.normalized_shape, self.weight, self.bias, self.eps)
    return x:to(orig_type)
end

-- class LayerNorm(nn.LayerNorm):
local LayerNorm = nn.LayerNorm:extend("LayerNorm")
function LayerNorm:forward(x)
    local orig_type = x.dtype
    x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
    return x:to(orig_type)
end

-- class QuickGELU(nn.Module):
local QuickGELU = nn.Module:extend("QuickGELU")
function QuickGELU:forward(x)
    -- return x * torch.sigmoid(1.702 * x)
    return x * tide.sigmoid(1.702 * x)
end

-- class LayerScale(nn.Module):
local LayerScale = nn.Module:extend("LayerScale")
-- def __init__(self, dim, init_values=1e-5, inplace=False):
function LayerScale:init(dim, init_values, inplace)
    self.inplace = inplace or false
    -- self.gamma = nn.Parameter(init_values * torch.ones(dim))
    self.gamma = nn.Parameter((init_values or 1e-5) * tide.ones(dim))
end
function LayerScale:forward(x)
    -- return x.mul_(self.gamma) if self.inplace else x * self.gamma
    if self.inplace then return x:mul_(self.gamma) end
    return x * self.gamma
end

-- class Attention(nn.Module):
local Attention = nn.Module:extend("Attention")
-- def __init__(self, dim, num_heads=8, kdim=None, vdim=None, qkv_bias=True, qk_norm=False,
--              scaled_cosine=False, scale_heads=False, inner_norm=False,
--              logit_scale_max=math.log(1. / 0.01), norm_layer=LayerNormFp32, attn_drop=0.,
--              proj_drop=0., use_sdpa=True):
function Attention:init(dim, num_heads, opts)
    opts = opts or {}
    num_heads = num_heads or 8
    local qkv_bias = opts.qkv_bias ~= false
    local norm_layer = opts.norm_layer or LayerNormFp32
    -- assert not (scaled_cosine and qk_norm), "Cannot activate both ..."
    assert(not (opts.scaled_cosine and opts.qk_norm),
        "Cannot activate both scaled cosine and QK normalization")
    self.scaled_cosine = opts.scaled_cosine or false
    self.scale_heads = opts.scale_heads or false
    -- assert dim % num_heads == 0, 'dim should be divisible by num_heads'
    assert(dim % num_heads == 0, "dim should be divisible by num_heads")
    self.num_heads = num_heads
    -- self.head_dim = dim // num_heads
    self.head_dim = math.floor(dim / num_heads)
    self.scale = self.head_dim ^ -0.5
    self.logit_scale_max = opts.logit_scale_max or math.log(1 / 0.01)
    self.use_sdpa = opts.use_sdpa ~= false

    local kdim = opts.kdim or dim
    local vdim = opts.vdim or dim

    if kdim == dim and vdim == dim then
        -- self.in_proj_weight = nn.Parameter(torch.empty((dim * 3, dim)))
        self.in_proj_weight = nn.Parameter(tide.empty({ dim * 3, dim }))
    else
        -- self.q_proj_weight = nn.Parameter(torch.empty((dim, dim)))
        self.q_proj_weight = nn.Parameter(tide.empty({ dim, dim }))
        self.k_proj_weight = nn.Parameter(tide.empty({ dim, kdim }))
        self.v_proj_weight = nn.Parameter(tide.empty({ dim, vdim }))
    end
    if qkv_bias then
        self.in_proj_bias = nn.Parameter(tide.empty(dim * 3))
    end

    if opts.qk_norm then
        self.ln_q = norm_layer(self.head_dim)
        self.ln_k = norm_layer(self.head_dim)
    else
        self.ln_q = nn.Identity()
        self.ln_k = nn.Identity()
    end

    if self.scaled_cosine then
        -- self.logit_scale = nn.Parameter(torch.log(10 * torch.ones((num_heads, 1, 1))))
        self.logit_scale = nn.Parameter(tide.log(10 * tide.ones({ num_heads, 1, 1 })))
    end

    self.attn_drop = nn.Dropout(opts.attn_drop or 0)

    if self.scale_heads then
        -- self.head_scale = nn.Parameter(torch.ones((num_heads, 1, 1)))
        self.head_scale = nn.Parameter(tide.ones({ num_heads, 1, 1 }))
    end

    if opts.inner_norm then
        self.ln_inner = norm_layer(dim)
    else
        self.ln_inner = nn.Identity()
    end

    self.out_proj = nn.Linear(dim, dim)
    self.out_drop = nn.Dropout(opts.proj_drop or 0)

    self:_reset_parameters()
end

function Attention:_reset_parameters()
    -- Match nn.MultiheadAttention init
    if self.in_proj_weight ~= nil then
        nn.init.xavier_uniform_(self.in_proj_weight)
    else
        nn.init.xavier_uniform_(self.q_proj_weight)
        nn.init.xavier_uniform_(self.k_proj_weight)
        nn.init.xavier_uniform_(self.v_proj_weight)
    end
    if self.in_proj_bias ~= nil then
        nn.init.constant_(self.in_proj_bias, 0.)
    end
    nn.init.constant_(self.out_proj.bias, 0.)
end

local function apply_mask(attn, attn_mask)
    -- if attn_mask.dtype == torch.bool:
    if attn_mask.dtype == tide.bool then
        -- attn.masked_fill_(~attn_mask, float("-inf"))
        attn:masked_fill_(attn_mask:logical_not(), -math.huge)
    else
        attn = attn + attn_mask:to({ dtype = attn.dtype })
    end
    return attn
end

-- def forward(self, x, k_x=None, v_x=None, attn_mask=None):
function Attention:forward(x, k_x, v_x, attn_mask)
    -- N, L, C = x.shape
    local N, L, C = unpack(x.shape)
    local q, k, v
    if k_x == nil and v_x == nil then
        -- Self-attention fast path: fused QKV projection
        if self.in_proj_weight ~= nil then
            -- q, k, v = F.linear(x, self.in_proj_weight, self.in_proj_bias).chunk(3, dim=-1)
            q, k, v = unpack(F.linear(x, self.in_proj_weight, self.in_proj_bias)
                :chunk(3, { dim = -1 }))
        else
            local bias_q, bias_k, bias_v
            if self.in_proj_bias ~= nil then
                bias_q, bias_k, bias_v = unpack(self.in_proj_bias:chunk(3))
            end
            q = F.linear(x, self.q_proj_weight, bias_q)
            k = F.linear(x, self.k_proj_weight, bias_k)
            v = F.linear(x, self.v_proj_weight, bias_v)
        end
    else
        -- Cross-attention path: separate Q/K/V projections
        if k_x == nil then k_x = x end
        if v_x == nil then v_x = x end
        local bias_q, bias_k, bias_v
        if self.in_proj_bias ~= nil then
            bias_q, bias_k, bias_v = unpack(self.in_proj_bias:chunk(3))
        end
        local w_q, w_k, w_v
        if self.in_proj_weight ~= nil then
            -- w_q, w_k, w_v = self.in_proj_weight.chunk(3, dim=0)
            w_q, w_k, w_v = unpack(self.in_proj_weight:chunk(3, { dim = 1 }))
        else
            w_q, w_k, w_v = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        end
        q = F.linear(x, w_q, bias_q)
        k = F.linear(k_x, w_k, bias_k)
        v = F.linear(v_x, w_v, bias_v)
    end

    -- q = q.reshape(N, -1, self.num_heads, self.head_dim).transpose(1, 2)
    q = q:reshape(N, -1, self.num_heads, self.head_dim):transpose(2, 3)
    k = k:reshape(N, -1, self.num_heads, self.head_dim):transpose(2, 3)
    v = v:reshape(N, -1, self.num_heads, self.head_dim):transpose(2, 3)

    if attn_mask ~= nil and attn_mask.ndim == 3 then
        -- reshape (N*num_heads, L, L) -> (N, num_heads, L, L)
        attn_mask = attn_mask:reshape(N, self.num_heads, L, L)
    end

    if self.logit_scale ~= nil then
        -- attn = F.normalize(q, dim=-1) @ F.normalize(k, dim=-1).transpose(-1, -2)
        local attn = F.normalize(q, { dim = -1 }):matmul(F.normalize(k, { dim = -1 })
            :transpose(-1, -2))
        -- logit_scale = torch.clamp(self.logit_scale, max=self.logit_scale_max).exp()
        local logit_scale = tide.clamp(self.logit_scale, { max = self.logit_scale_max }):exp()
        attn = attn * logit_scale
        if attn_mask ~= nil then
            attn = apply_mask(attn, attn_mask)
        end
        -- attn = attn.softmax(dim=-1)
        attn = attn:softmax({ dim = -1 })
        attn = self.attn_drop(attn)
        -- x = attn @ v
        x = attn:matmul(v)
    else
        q = self.ln_q(q)
        k = self.ln_k(k)
        if self.use_sdpa then
            -- x = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask,
            --     dropout_p=self.attn_drop.p if self.training else 0., scale=self.scale)
            x = F.scaled_dot_product_attention(q, k, v, { attn_mask = attn_mask,
                dropout_p = self.training and self.attn_drop.p or 0., scale = self.scale })
        else
            q = q * self.scale
            local attn = q:matmul(k:transpose(-1, -2))
            if attn_mask ~= nil then
                attn = apply_mask(attn, attn_mask)
            end
            attn = attn:softmax({ dim = -1 })
            attn = self.attn_drop(attn)
            x = attn:matmul(v)
        end
    end

    -- N, num_heads, L, head_dim
    if self.head_scale ~= nil then
        x = x * self.head_scale
    end
    -- x = x.transpose(1, 2).reshape(N, -1, C)
    x = x:transpose(2, 3):reshape(N, -1, C)
    x = self.ln_inner(x)
    x = self.out_proj(x)
    x = self.out_drop(x)
    return x
end

-- class AttentionalPooler(nn.Module):
local AttentionalPooler = nn.Module:extend("AttentionalPooler")
-- def __init__(self, d_model, context_dim, n_head=8, n_queries=256, norm_layer=LayerNorm):
function AttentionalPooler:init(d_model, context_dim, n_head, n_queries, norm_layer)
    norm_layer = norm_layer or LayerNorm
    -- self.query = nn.Parameter(torch.randn(n_queries, d_model))
    self.query = nn.Parameter(tide.randn(n_queries or 256, d_model))
    -- self.attn = Attention(d_model, num_heads=n_head, kdim=context_dim, vdim=context_dim,
    --                       qkv_bias=True)
    self.attn = Attention(d_model, n_head or 8, { kdim = context_dim, vdim = context_dim,
        qkv_bias = true })
    self.ln_q = norm_layer(d_model)
    self.ln_k = norm_layer(context_dim)
end

function AttentionalPooler:forward(x)
    -- N = x.shape[0]
    local N = x.shape[1]
    x = self.ln_k(x)
    local q = self.ln_q(self.query)
    -- out = self.attn(q.unsqueeze(0).expand(N, -1, -1), k_x=x, v_x=x)
    local out = self.attn(q:unsqueeze(1):expand(N, -1, -1), x, x)
    return out
end

-- class ResidualAttentionBlock(nn.Module):
local ResidualAttentionBlock = nn.Module:extend("ResidualAttentionBlock")
-- def __init__(self, d_model, n_head, mlp_ratio=4.0, ls_init_value=None, act_layer=nn.GELU,
--              norm_layer=LayerNorm, is_cross_attention=False):
function ResidualAttentionBlock:init(d_model, n_head, mlp_ratio, opts)
    opts = opts or {}
    mlp_ratio = mlp_ratio or 4.0
    local act_layer = opts.act_layer or nn.GELU
    local norm_layer = opts.norm_layer or LayerNorm
    local ls_init_value = opts.ls_init_value

    self.ln_1 = norm_layer(d_model)
    -- self.attn = Attention(d_model, num_heads=n_head, qkv_bias=True)
    self.attn = Attention(d_model, n_head, { qkv_bias = true })
    -- self.ls_1 = LayerScale(d_model, ls_init_value) if ls_init_value is not None
    --     else nn.Identity()
    self.ls_1 = ls_init_value ~= nil and LayerScale(d_model, ls_init_value) or nn.Identity()
    if opts.is_cross_attention then
        self.ln_1_kv = norm_layer(d_model)
    end

    self.ln_2 = norm_layer(d_model)
    -- mlp_width = int(d_model * mlp_ratio)
    local mlp_width = math.floor(d_model * mlp_ratio)
    -- self.mlp = nn.Sequential(OrderedDict([("c_fc", nn.Linear(d_model, mlp_width)),
    --     ("gelu", act_layer()), ("c_proj", nn.Linear(mlp_width, d_model))]))
    self.mlp = nn.Sequential({
        { "c_fc", nn.Linear(d_model, mlp_width) },
        { "gelu", act_layer() },
        { "c_proj", nn.Linear(mlp_width, d_model) },
    })
    self.ls_2 = ls_init_value ~= nil and LayerScale(d_model, ls_init_value) or nn.Identity()
end

function ResidualAttentionBlock:get_weight_dtype()
    return self.mlp.c_fc.weight.dtype
end

function ResidualAttentionBlock:attention(q_x, k_x, v_x, attn_mask)
    -- k_x = k_x if k_x is not None else q_x
    k_x = k_x ~= nil and k_x or q_x
    v_x = v_x ~= nil and v_x or q_x
    -- attn_mask = attn_mask.to(q_x.dtype) if attn_mask is not None else None
    attn_mask = attn_mask ~= nil and attn_mask:to(q_x.dtype) or nil
    return self.attn(q_x, k_x, v_x, attn_mask)
end

-- def forward(self, q_x, k_x=None, v_x=None, attn_mask=None):
function ResidualAttentionBlock:forward(q_x, k_x, v_x, attn_mask)
    -- k_x = self.ln_1_kv(k_x) if hasattr(self, "ln_1_kv") and k_x is not None else None
    k_x = (self.ln_1_kv ~= nil and k_x ~= nil) and self.ln_1_kv(k_x) or nil
    v_x = (self.ln_1_kv ~= nil and v_x ~= nil) and self.ln_1_kv(v_x) or nil
    -- x = q_x + self.ls_1(self.attention(q_x=self.ln_1(q_x), k_x=k_x, v_x=v_x,
    --                                    attn_mask=attn_mask))
    local x = q_x + self.ls_1(self:attention(self.ln_1(q_x), k_x, v_x, attn_mask))
    x = x + self.ls_2(self.mlp(self.ln_2(x)))
    return x
end

-- class Transformer(nn.Module):  (the default block type: ResidualAttentionBlock)
local Transformer = nn.Module:extend("Transformer")
-- def __init__(self, width, layers, heads, mlp_ratio=4.0, ls_init_value=None,
--              act_layer=nn.GELU, norm_layer=LayerNorm, ...):
function Transformer:init(width, layers, heads, mlp_ratio, opts)
    opts = opts or {}
    self.width = width
    self.layers = layers
    self.grad_checkpointing = false
    -- self.resblocks = nn.ModuleList([ResidualAttentionBlock(width, heads, mlp_ratio,
    --     ls_init_value=ls_init_value, act_layer=act_layer, norm_layer=norm_layer)
    --     for _ in range(layers)])
    local blocks = {}
    for i = 1, layers do
        blocks[i] = ResidualAttentionBlock(width, heads, mlp_ratio, {
            ls_init_value = opts.ls_init_value, act_layer = opts.act_layer,
            norm_layer = opts.norm_layer })
    end
    self.resblocks = nn.ModuleList(blocks)
end

function Transformer:get_cast_dtype()
    return self.resblocks[1]:get_weight_dtype()
end

function Transformer:set_grad_checkpointing(enable)
    self.grad_checkpointing = enable ~= false
end

function Transformer:forward(x, attn_mask)
    -- for r in self.resblocks:
    for _, r in ipairs(self.resblocks) do
        if self.grad_checkpointing then
            -- x = checkpoint(r, x, None, None, attn_mask, use_reentrant=False)
            x = tide.utils.checkpoint(r, x, nil, nil, attn_mask, { use_reentrant = false })
        else
            -- x = r(x, attn_mask=attn_mask)
            x = r(x, nil, nil, attn_mask)
        end
    end
    return x
end

---------------------------------------------------------------------------------------------
-- 3. checks against PyTorch 1.13 (same features, same weights)
---------------------------------------------------------------------------------------------
-- every parameter, in named_parameters order (k = 0, 1, ...), set from a fixed formula:
-- p.copy_((0.3 * torch.sin(0.731 * torch.arange(p.numel()) + 1.37 * k)).view(p.shape))
local function fill(model)
    tide.no_grad(function()
        for k, np in ipairs(model:named_parameters()) do
            local p = np[2]
            local v = (tide.arange(p:numel()):float() * 0.731 + 1.37 * (k - 1)):sin() * 0.3
            p:copy_(v:view(p.shape))
        end
    end)
end

-- torch.sin(0.5 * torch.arange(n) + c).view(*shape)
local function feat(shape, c)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    return (tide.arange(n):float() * 0.5 + c):sin():view(shape)
end

local function names(m)
    local out = {}
    for i, np in ipairs(m:named_parameters()) do out[i] = np[1] end
    return out
end

local img = F.normalize(feat({ 4, 6 }, 0.0), { dim = -1 })
local txt = F.normalize(feat({ 4, 6 }, 1.0), { dim = -1 })
local SCALE = tide.tensor(1 / 0.07)

describe("open_clip loss.py (world_size 1)", function()
    it("gather_features at world_size 1 returns the local features", function()
        local all_i, all_t = gather_features(img, txt)
        assert.are.same({ 4, 6 }, all_i.shape)
        assert.is_true(tide.equal(all_i, img) and tide.equal(all_t, txt))
    end)

    it("ClipLoss: logits, the cached labels and the symmetric cross entropy", function()
        local cl = ClipLoss({ cache_labels = true })
        local lpi, lpt = cl:get_logits(img, txt, SCALE)
        assert_close_list({ 8.1728764, -9.7181625, 11.0609808, -12.1855516 }, list(lpi[1]),
            1e-5, "logits_per_image[1]")
        assert.is_true(tide.allclose(lpt, lpi.T))
        assert_close_list({ 1.482264 }, { cl(img, txt, SCALE):item() }, 1e-5, "loss")
        -- the labels are cached per device and reused while num_logits stays 4
        assert.are.equal(4, cl.prev_num_logits)
        local cached = cl.labels[img.device]
        assert.are.same({ 1, 2, 3, 4 }, cached:tolist())
        assert.are.equal(cached, cl:get_ground_truth(img.device, 4))
        -- a bias moves every logit alike: cross entropy unchanged
        local d = cl(img, txt, SCALE, tide.tensor(-1.5), true)
        assert_close_list({ 1.482264 }, { d.contrastive_loss:item() }, 1e-5, "output_dict")
        -- no cache: a new labels tensor each call
        local nc = ClipLoss()
        nc(img, txt, SCALE)
        assert.are.equal(0, nc.prev_num_logits)
        assert.is_nil(nc.labels[img.device])
    end)

    it("CoCaLoss: caption loss with ignore_index = pad_id, weights and output_dict", function()
        local logits = feat({ 4, 5, 7 }, 2.0) * 2
        -- labels = torch.tensor([[3, 1, 0, 0, 0], ...])  (0 is the pad: token 1 here)
        local labels = tide.tensor({ { 3, 1, 0, 0, 0 }, { 6, 2, 5, 0, 0 }, { 4, 4, 4, 4, 1 },
            { 2, 0, 0, 0, 0 } }, { dtype = tide.long }) + 1
        local cc = CoCaLoss(2.0, 1.0, { pad_id = 1 })
        local clip_loss, caption_loss = cc(img, txt, logits, labels, SCALE)
        assert_close_list({ 1.482264, 6.0954556 }, { clip_loss:item(), caption_loss:item() },
            1e-5, "coca")
        local cc0 = CoCaLoss(2.0, 0.0)
        local d = cc0(img, txt, logits, labels, SCALE, true)
        assert.are.equal(0, d.contrastive_loss:item())
        assert_close_list({ 6.0954556 }, { d.caption_loss:item() }, 1e-5, "coca0")
    end)

    it("DistillClipLoss: contrastive and distill losses", function()
        local di = F.normalize(feat({ 4, 6 }, 3.0), { dim = -1 })
        local dt = F.normalize(feat({ 4, 6 }, 4.0), { dim = -1 })
        local dl = DistillClipLoss()
        local c, d = dl(img, txt, SCALE, di, dt, tide.tensor(20.0))
        assert_close_list({ 1.482264, 0.0798321 }, { c:item(), d:item() }, 1e-5, "distill")
        local od = dl(img, txt, SCALE, di, dt, tide.tensor(20.0), true)
        assert_close_list({ 0.0798321 }, { od.distill_loss:item() }, 1e-5, "output_dict")
    end)

    it("SigLipLoss: -logsigmoid(labels * logits) with the logit bias", function()
        local sl = SigLipLoss()
        local labels = sl:get_ground_truth(img.device, img.dtype, 3)
        assert.are.same({ { 1, -1, -1 }, { -1, 1, -1 }, { -1, -1, 1 } }, labels:tolist())
        local loss = sl(img, txt, tide.tensor(10.0), tide.tensor(-10.0))
        assert_close_list({ 4.3392358 }, { loss:item() }, 1e-5, "siglip")
        local d = sl(img, txt, tide.tensor(10.0), tide.tensor(-10.0), true)
        assert_close_list({ 4.3392358 }, { d.contrastive_loss:item() }, 1e-5, "output_dict")
    end)
end)

describe("open_clip transformer.py (eval mode)", function()
    local x = feat({ 4, 3, 8 }, 0.5)
    -- mask = torch.full((3, 3), float("-inf")).triu(1)
    local mask = tide.full({ 3, 3 }, -math.huge):triu(1)

    it("LayerNormFp32 computes in float32 and casts back; QuickGELU, LayerScale", function()
        local ln = LayerNormFp32(8)
        fill(ln)
        local y = ln(x:half())
        assert.are.equal(tide.float16, y.dtype)
        assert_close_list({ 0.2939453, 0.4223633, 0.4133301, 0.104187, -0.2478027, -0.2316895,
            0.1885986, 0.5791016 }, list(y[1][1]:float()), 2e-3, "LayerNormFp32")
        assert.is_true(tide.isinstance(ln, nn.LayerNorm))
        assert_close_list({ -0.1542042, 0.3503884, 1.9356586 },
            list(QuickGELU()(tide.tensor({ -1.0, 0.5, 2.0 }))), 1e-6, "QuickGELU")
        -- float32 named: Lua 5.1 and LuaJIT read 1. as an integer, so tide.tensor makes int64
        local t = tide.tensor({ 1, 2, 3 }, { dtype = tide.float32 })
        local ls = LayerScale(3, 0.5)
        assert.are.same({ 0.5, 1, 1.5 }, ls(t):tolist())
        local lsi = LayerScale(3, 0.5, true)
        lsi(t)
        assert.are.same({ 0.5, 1, 1.5 }, t:tolist())
    end)

    it("Attention with scaled_cosine (clamped logit_scale) and head_scale", function()
        local a = Attention(8, 2, { scaled_cosine = true, scale_heads = true })
        assert.are.same({ "in_proj_weight", "in_proj_bias", "logit_scale", "head_scale",
            "out_proj.weight", "out_proj.bias" }, names(a))
        fill(a)
        -- head 1's logit_scale 5 is clamped to log(100)
        tide.no_grad(function() a.logit_scale:copy_(tide.tensor({ 5.0, 1.0 }):view(2, 1, 1)) end)
        a:eval()
        local y = a(x)
        assert.are.same({ 4, 3, 8 }, y.shape)
        assert_close_list({ 0.0045945, 0.0849924, 0.0557809, -0.0711639, -0.2211201,
            -0.2965392, -0.230791, -0.0274496 }, list(y[1][1]), 1e-4, "attn[1][1]")
        assert_close_list({ 3.2375312 }, { y:sum():item() }, 1e-4, "sum")
    end)

    it("Attention with a float attn_mask: the SDPA and the manual path", function()
        local a2 = Attention(8, 2)
        fill(a2)
        a2:eval()
        local want = { -1.0847481, -0.6152198, 0.0655626, 0.7976803, 1.3791671, 1.6371262,
            1.4929131, 0.9924141, -1.0219597, -0.6692827, -0.0952735, 0.5600532, 1.1090471,
            1.3848674, 1.3055407, 0.9048572, -0.3263617, -0.6218213, -0.7047967, -0.5928296,
            -0.3722785, -0.1487598, 0.0055051, 0.0807609 }
        -- a bool mask is true where attention is allowed (SDPA's convention, and ~attn_mask's)
        local keep = tide.ones({ 3, 3 }):tril():to(tide.bool)
        assert_close_list(want, list(a2(x, nil, nil, mask)[2]), 1e-4, "sdpa")
        assert_close_list(want, list(a2(x, nil, nil, keep)[2]), 1e-4, "sdpa, bool mask")
        a2.use_sdpa = false
        assert_close_list(want, list(a2(x, nil, nil, mask)[2]), 1e-4, "manual")
        assert_close_list(want, list(a2(x, nil, nil, keep)[2]), 1e-4, "manual, bool mask")
    end)

    it("AttentionalPooler: learned queries attend over the context", function()
        local p = AttentionalPooler(8, 6, 2, 3)
        assert.are.same({ "query", "attn.q_proj_weight", "attn.k_proj_weight",
            "attn.v_proj_weight", "attn.in_proj_bias", "attn.out_proj.weight",
            "attn.out_proj.bias", "ln_q.weight", "ln_q.bias", "ln_k.weight", "ln_k.bias" },
            names(p))
        fill(p)
        p:eval()
        local o = p(feat({ 4, 5, 6 }, 1.5))
        assert.are.same({ 4, 3, 8 }, o.shape)
        assert_close_list({ 0.0660291, 0.1001466, 0.0711698, 0.0536962, 0.1075224, 0.2376045,
            0.3854771, 0.4576319 }, list(o[4][1]), 1e-4, "pool[4][1]")
        assert_close_list({ 17.7529984 }, { o:sum():item() }, 1e-4, "sum")
    end)

    it("ResidualAttentionBlock with LayerScale, QuickGELU and an attn_mask", function()
        local b = ResidualAttentionBlock(8, 2, 2.0, { ls_init_value = 0.5,
            act_layer = QuickGELU })
        assert.are.same({ "ln_1.weight", "ln_1.bias", "attn.in_proj_weight", "attn.in_proj_bias",
            "attn.out_proj.weight", "attn.out_proj.bias", "ls_1.gamma", "ln_2.weight",
            "ln_2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias", "mlp.c_proj.weight",
            "mlp.c_proj.bias", "ls_2.gamma" }, names(b))
        fill(b)
        b:eval()
        local o = b(x, nil, nil, mask)
        assert_close_list({ -0.48919, -0.0763137, 0.3345755, 0.7288612, 0.9969036, 0.9965636,
            0.6940346, 0.2178865 }, list(o[3][1]), 1e-4, "block[3][1]")
        assert_close_list({ 4.7230411 }, { o:sum():item() }, 1e-4, "sum")
    end)

    it("Transformer: the resblocks loop, plain and with grad checkpointing", function()
        local t = Transformer(8, 2, 2, 2.0)
        fill(t)
        t:eval()
        assert.are.equal(tide.float32, t:get_cast_dtype())
        local o = t(x, mask)
        assert_close_list({ 0.1709755, 1.4338651, 1.9025068, 1.4662578, 0.5317652, -0.2754607,
            -0.5291006, -0.2551215 }, list(o[1][1]), 1e-4, "tr[1][1]")
        assert_close_list({ 25.4063034 }, { o:sum():item() }, 1e-4, "sum")
        -- checkpointed blocks: the same output and the same gradients
        local xg = x:clone():requires_grad_()
        t(xg, mask):sum():backward()
        local g = xg.grad:clone()
        t:set_grad_checkpointing(true)
        local xc = x:clone():requires_grad_()
        local oc = t(xc, mask)
        assert.is_true(tide.allclose(oc, o, 1e-6, 1e-6))
        oc:sum():backward()
        assert.is_true(tide.allclose(xc.grad, g, 1e-5, 1e-6))
    end)
end)

describe("a tiny two-tower CLIP trained with ClipLoss", function()
    -- class TwoTower(nn.Module):  (two Linear encoders and CLIP's logit_scale)
    local TwoTower = nn.Module:extend("TwoTower")
    function TwoTower:init()
        self.visual = nn.Linear(5, 6)
        self.text = nn.Linear(7, 6)
        -- self.logit_scale = nn.Parameter(torch.ones([]) * np.log(1 / 0.07))
        self.logit_scale = nn.Parameter(tide.ones({}) * math.log(1 / 0.07))
    end
    function TwoTower:forward(im, tx)
        -- return F.normalize(self.visual(im), dim=-1), F.normalize(self.text(tx), dim=-1),
        --     self.logit_scale.exp()
        return F.normalize(self.visual(im), { dim = -1 }), F.normalize(self.text(tx), { dim = -1 }),
            self.logit_scale:exp()
    end

    it("AdamW steps with the logit_scale clamp match PyTorch and fall", function()
        local m = TwoTower()
        fill(m)
        tide.no_grad(function() m.logit_scale:fill_(math.log(1 / 0.07)) end)
        local opt = optim.AdamW(m:parameters(), { lr = 0.05, weight_decay = 0.2 })
        local crit = ClipLoss()
        local im, tx = feat({ 4, 5 }, 0.2), feat({ 4, 7 }, 0.9)
        local losses = {}
        for step = 1, 3 do
            opt:zero_grad()
            local i, t, s = m(im, tx)
            local loss = crit(i, t, s)
            loss:backward()
            opt:step()
            -- with torch.no_grad(): unwrap_model(model).logit_scale.clamp_(0, math.log(100))
            tide.no_grad(function() m.logit_scale:clamp_(0, math.log(100)) end)
            losses[step] = loss:item()
            assert_finite(losses[step], "loss " .. step)
        end
        assert_close_list({ 2.383967161178589, 0.6615191698074341, 0.4587997496128082 }, losses,
            1e-4, "losses")
        assert.is_true(losses[3] < losses[2] and losses[2] < losses[1])
        assert_close_list({ 2.4618844985961914 }, { m.logit_scale:item() }, 1e-4, "logit_scale")
    end)
end)
