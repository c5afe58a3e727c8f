-- ported_scripts196_spec.lua — facebookresearch/mae's models_mae.py (MaskedAutoencoderViT:
-- initialize_weights, patchify / unpatchify, random_masking, forward_encoder, forward_decoder,
-- forward_loss with norm_pix_loss false and true, forward) and util/pos_embed.py
-- (get_2d_sincos_pos_embed and its helpers), ported line for line at tiny sizes (img 16, patch 4,
-- in_chans 3, embed_dim 16, depth 1, heads 2, decoder_embed_dim 8, decoder_depth 1, decoder
-- heads 2, mask_ratio 0.75, batch 2). models_mae.py imports PatchEmbed and Block from timm
-- (timm.models.vision_transformer, 0.3.2 as MAE pins); timm is not in the venv, so minimal
-- versions of them (PatchEmbed, Mlp, Attention, Block with no dropout / drop path) are pasted
-- here and in the PyTorch reference alike. random_masking draws torch.rand(N, L) noise; here
-- (and in the reference) the noise is given as an argument, a fixed formula, so both sides sort
-- the same numbers. The Python line stands above each Lua line that differs from it. Dims are
-- 1-based: ids_shuffle / ids_restore hold 1-based positions (PyTorch's plus one).
-- Checked against PyTorch 1.13 (/tmp script: the same classes, every parameter set by a formula
-- over its element index): each module's output, both losses, the gradients of the images and of
-- patch_embed.proj.weight and decoder_pred.weight, those parameters after one AdamW step.
local tide = require("tide")
local nn = tide.nn

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list
local assert_finite = ported.assert_finite

---------------------------------------------------------------------------------------------
-- timm (pasted, minimal): PatchEmbed, Mlp, Attention, Block
---------------------------------------------------------------------------------------------
-- class PatchEmbed(nn.Module):
local PatchEmbed = nn.Module:extend("PatchEmbed")
-- def __init__(self, img_size=224, patch_size=16, in_chans=3, embed_dim=768):
function PatchEmbed:init(img_size, patch_size, in_chans, embed_dim)
    -- self.img_size = (img_size, img_size); self.patch_size = (patch_size, patch_size)
    self.img_size = { img_size, img_size }
    self.patch_size = { patch_size, patch_size }
    -- self.grid_size = (img_size // patch_size, img_size // patch_size)
    self.grid_size = { math.floor(img_size / patch_size), math.floor(img_size / patch_size) }
    self.num_patches = self.grid_size[1] * self.grid_size[2]
    -- self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)
    self.proj = nn.Conv2d(in_chans, embed_dim, { kernel_size = patch_size, stride = patch_size })
end

function PatchEmbed:forward(x)
    -- return self.proj(x).flatten(2).transpose(1, 2)
    return self.proj(x):flatten(3):transpose(2, 3)
end

-- class Mlp(nn.Module):
local Mlp = nn.Module:extend("Mlp")
function Mlp:init(in_features, hidden_features)
    self.fc1 = nn.Linear(in_features, hidden_features)
    self.act = nn.GELU()
    self.fc2 = nn.Linear(hidden_features, in_features)
end

function Mlp:forward(x)
    return self.fc2(self.act(self.fc1(x)))
end

-- class Attention(nn.Module):
local Attention = nn.Module:extend("Attention")
-- def __init__(self, dim, num_heads=8, qkv_bias=False, qk_scale=None):
function Attention:init(dim, num_heads, qkv_bias, qk_scale)
    self.num_heads = num_heads
    -- head_dim = dim // num_heads
    local head_dim = math.floor(dim / num_heads)
    -- self.scale = qk_scale or head_dim ** -0.5
    self.scale = qk_scale or head_dim ^ -0.5
    -- self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
    self.qkv = nn.Linear(dim, dim * 3, { bias = qkv_bias })
    self.proj = nn.Linear(dim, dim)
end

function Attention:forward(x)
    -- B, N, C = x.shape
    local B, N, C = x.shape[1], x.shape[2], x.shape[3]
    -- qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads)
    --     .permute(2, 0, 3, 1, 4)
    local qkv = self.qkv(x):reshape(B, N, 3, self.num_heads, math.floor(C / self.num_heads))
        :permute(3, 1, 4, 2, 5)
    -- q, k, v = qkv[0], qkv[1], qkv[2]
    local q, k, v = qkv[1], qkv[2], qkv[3]
    -- attn = (q @ k.transpose(-2, -1)) * self.scale
    local attn = q:matmul(k:transpose(-2, -1)) * self.scale
    -- attn = attn.softmax(dim=-1)
    attn = attn:softmax(-1)
    -- x = (attn @ v).transpose(1, 2).reshape(B, N, C)
    x = attn:matmul(v):transpose(2, 3):reshape(B, N, C)
    return self.proj(x)
end

-- class Block(nn.Module):
local Block = nn.Module:extend("Block")
-- def __init__(self, dim, num_heads, mlp_ratio=4., qkv_bias=False, qk_scale=None,
--              norm_layer=nn.LayerNorm):
function Block:init(dim, num_heads, mlp_ratio, qkv_bias, qk_scale, norm_layer)
    self.norm1 = norm_layer(dim)
    self.attn = Attention(dim, num_heads, qkv_bias, qk_scale)
    self.norm2 = norm_layer(dim)
    -- self.mlp = Mlp(dim, int(dim * mlp_ratio))
    self.mlp = Mlp(dim, math.floor(dim * mlp_ratio))
end

function Block:forward(x)
    -- x = x + self.attn(self.norm1(x))
    x = x + self.attn(self.norm1(x))
    return x + self.mlp(self.norm2(x))
end

---------------------------------------------------------------------------------------------
-- util/pos_embed.py (numpy there; tide tensors here, float64 as numpy's)
---------------------------------------------------------------------------------------------
local get_2d_sincos_pos_embed_from_grid, get_1d_sincos_pos_embed_from_grid

-- def get_2d_sincos_pos_embed(embed_dim, grid_size, cls_token=False):
local function get_2d_sincos_pos_embed(embed_dim, grid_size, cls_token)
    -- grid_h = np.arange(grid_size, dtype=np.float32)
    local grid_h = tide.arange(grid_size, { dtype = tide.float32 })
    local grid_w = tide.arange(grid_size, { dtype = tide.float32 })
    -- grid = np.meshgrid(grid_w, grid_h)  # here w goes first  (numpy's indexing is "xy")
    local grid = tide.meshgrid({ grid_w, grid_h }, { indexing = "xy" })
    -- grid = np.stack(grid, axis=0)
    grid = tide.stack(grid, 1)
    -- grid = grid.reshape([2, 1, grid_size, grid_size])
    grid = grid:reshape({ 2, 1, grid_size, grid_size })
    local pos_embed = get_2d_sincos_pos_embed_from_grid(embed_dim, grid)
    if cls_token then
        -- pos_embed = np.concatenate([np.zeros([1, embed_dim]), pos_embed], axis=0)
        pos_embed = tide.cat({ tide.zeros({ 1, embed_dim }, { dtype = tide.float64 }),
            pos_embed }, 1)
    end
    return pos_embed
end

-- def get_2d_sincos_pos_embed_from_grid(embed_dim, grid):
function get_2d_sincos_pos_embed_from_grid(embed_dim, grid)
    assert(embed_dim % 2 == 0)
    -- use half of dimensions to encode grid_h
    -- emb_h = get_1d_sincos_pos_embed_from_grid(embed_dim // 2, grid[0])  # (H*W, D/2)
    local emb_h = get_1d_sincos_pos_embed_from_grid(math.floor(embed_dim / 2), grid[1])
    -- emb_w = get_1d_sincos_pos_embed_from_grid(embed_dim // 2, grid[1])  # (H*W, D/2)
    local emb_w = get_1d_sincos_pos_embed_from_grid(math.floor(embed_dim / 2), grid[2])
    -- emb = np.concatenate([emb_h, emb_w], axis=1) # (H*W, D)
    local emb = tide.cat({ emb_h, emb_w }, 2)
    return emb
end

-- def get_1d_sincos_pos_embed_from_grid(embed_dim, pos):
function get_1d_sincos_pos_embed_from_grid(embed_dim, pos)
    assert(embed_dim % 2 == 0)
    -- omega = np.arange(embed_dim // 2, dtype=np.float)
    local omega = tide.arange(math.floor(embed_dim / 2), { dtype = tide.float64 })
    -- omega /= embed_dim / 2.
    omega = omega / (embed_dim / 2.)
    -- omega = 1. / 10000**omega  # (D/2,)
    omega = 1. / tide.pow(10000, omega)
    -- pos = pos.reshape(-1)  # (M,)
    pos = pos:reshape(-1)
    -- out = np.einsum('m,d->md', pos, omega)  # (M, D/2), outer product
    -- (numpy promotes float32 pos and float64 omega to float64)
    local out = tide.einsum("m,d->md", pos:double(), omega)
    local emb_sin = tide.sin(out)
    local emb_cos = tide.cos(out)
    -- emb = np.concatenate([emb_sin, emb_cos], axis=1)  # (M, D)
    local emb = tide.cat({ emb_sin, emb_cos }, 2)
    return emb
end

---------------------------------------------------------------------------------------------
-- models_mae.py
---------------------------------------------------------------------------------------------
-- class MaskedAutoencoderViT(nn.Module):
local MaskedAutoencoderViT = nn.Module:extend("MaskedAutoencoderViT")
-- def __init__(self, img_size=224, patch_size=16, in_chans=3,
--              embed_dim=1024, depth=24, num_heads=16,
--              decoder_embed_dim=512, decoder_depth=8, decoder_num_heads=16,
--              mlp_ratio=4., norm_layer=nn.LayerNorm, norm_pix_loss=False):
function MaskedAutoencoderViT:init(o)
    o = o or {}
    local img_size, patch_size, in_chans = o.img_size or 224, o.patch_size or 16, o.in_chans or 3
    local embed_dim, depth, num_heads = o.embed_dim or 1024, o.depth or 24, o.num_heads or 16
    local decoder_embed_dim = o.decoder_embed_dim or 512
    local decoder_depth, decoder_num_heads = o.decoder_depth or 8, o.decoder_num_heads or 16
    local mlp_ratio, norm_layer = o.mlp_ratio or 4., o.norm_layer or nn.LayerNorm
    local norm_pix_loss = o.norm_pix_loss or false

    -- MAE encoder specifics
    self.patch_embed = PatchEmbed(img_size, patch_size, in_chans, embed_dim)
    local num_patches = self.patch_embed.num_patches

    -- self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
    self.cls_token = nn.Parameter(tide.zeros(1, 1, embed_dim))
    -- self.pos_embed = nn.Parameter(torch.zeros(1, num_patches + 1, embed_dim),
    --                               requires_grad=False)  # fixed sin-cos embedding
    self.pos_embed = nn.Parameter(tide.zeros(1, num_patches + 1, embed_dim), false)

    -- self.blocks = nn.ModuleList([
    --     Block(embed_dim, num_heads, mlp_ratio, qkv_bias=True, qk_scale=None,
    --           norm_layer=norm_layer) for i in range(depth)])
    local blocks = {}
    for i = 1, depth do
        blocks[i] = Block(embed_dim, num_heads, mlp_ratio, true, nil, norm_layer)
    end
    self.blocks = nn.ModuleList(blocks)
    self.norm = norm_layer(embed_dim)

    -- MAE decoder specifics
    -- self.decoder_embed = nn.Linear(embed_dim, decoder_embed_dim, bias=True)
    self.decoder_embed = nn.Linear(embed_dim, decoder_embed_dim, { bias = true })

    self.mask_token = nn.Parameter(tide.zeros(1, 1, decoder_embed_dim))

    self.decoder_pos_embed = nn.Parameter(tide.zeros(1, num_patches + 1, decoder_embed_dim),
        false) -- fixed sin-cos embedding

    local decoder_blocks = {}
    for i = 1, decoder_depth do
        decoder_blocks[i] = Block(decoder_embed_dim, decoder_num_heads, mlp_ratio, true, nil,
            norm_layer)
    end
    self.decoder_blocks = nn.ModuleList(decoder_blocks)

    self.decoder_norm = norm_layer(decoder_embed_dim)
    -- self.decoder_pred = nn.Linear(decoder_embed_dim, patch_size**2 * in_chans, bias=True)
    self.decoder_pred = nn.Linear(decoder_embed_dim, patch_size ^ 2 * in_chans, { bias = true })

    self.norm_pix_loss = norm_pix_loss

    self:initialize_weights()
end

function MaskedAutoencoderViT:initialize_weights()
    -- initialize (and freeze) pos_embed by sin-cos embedding
    -- pos_embed = get_2d_sincos_pos_embed(self.pos_embed.shape[-1],
    --     int(self.patch_embed.num_patches**.5), cls_token=True)
    local pos_embed = get_2d_sincos_pos_embed(self.pos_embed.shape[3],
        math.floor(self.patch_embed.num_patches ^ .5), true)
    -- self.pos_embed.data.copy_(torch.from_numpy(pos_embed).float().unsqueeze(0))
    self.pos_embed.data:copy_(pos_embed:float():unsqueeze(1))

    local decoder_pos_embed = get_2d_sincos_pos_embed(self.decoder_pos_embed.shape[3],
        math.floor(self.patch_embed.num_patches ^ .5), true)
    self.decoder_pos_embed.data:copy_(decoder_pos_embed:float():unsqueeze(1))

    -- initialize patch_embed like nn.Linear (instead of nn.Conv2d)
    local w = self.patch_embed.proj.weight.data
    -- torch.nn.init.xavier_uniform_(w.view([w.shape[0], -1]))
    nn.init.xavier_uniform_(w:view({ w.shape[1], -1 }))

    -- torch.nn.init.normal_(self.cls_token, std=.02)
    nn.init.normal_(self.cls_token, { std = .02 })
    nn.init.normal_(self.mask_token, { std = .02 })

    -- initialize nn.Linear and nn.LayerNorm
    -- self.apply(self._init_weights)
    self:apply(function(m) self:_init_weights(m) end)
end

function MaskedAutoencoderViT:_init_weights(m)
    -- if isinstance(m, nn.Linear):
    if tide.isinstance(m, nn.Linear) then
        -- we use xavier_uniform following official JAX ViT:
        nn.init.xavier_uniform_(m.weight)
        if tide.isinstance(m, nn.Linear) and m.bias ~= nil then
            nn.init.constant_(m.bias, 0)
        end
    elseif tide.isinstance(m, nn.LayerNorm) then
        nn.init.constant_(m.bias, 0)
        nn.init.constant_(m.weight, 1.0)
    end
end

function MaskedAutoencoderViT:patchify(imgs)
    -- p = self.patch_embed.patch_size[0]
    local p = self.patch_embed.patch_size[1]
    -- assert imgs.shape[2] == imgs.shape[3] and imgs.shape[2] % p == 0
    assert(imgs.shape[3] == imgs.shape[4] and imgs.shape[3] % p == 0)

    -- h = w = imgs.shape[2] // p
    local h = math.floor(imgs.shape[3] / p)
    local w = h
    -- x = imgs.reshape(shape=(imgs.shape[0], 3, h, p, w, p))
    local x = imgs:reshape({ imgs.shape[1], 3, h, p, w, p })
    x = tide.einsum("nchpwq->nhwpqc", x)
    -- x = x.reshape(shape=(imgs.shape[0], h * w, p**2 * 3))
    x = x:reshape({ imgs.shape[1], h * w, p ^ 2 * 3 })
    return x
end

function MaskedAutoencoderViT:unpatchify(x)
    local p = self.patch_embed.patch_size[1]
    -- h = w = int(x.shape[1]**.5)
    local h = math.floor(x.shape[2] ^ .5)
    -- assert h * w == x.shape[1]
    assert(h * h == x.shape[2])

    -- x = x.reshape(shape=(x.shape[0], h, w, p, p, 3))
    x = x:reshape({ x.shape[1], h, h, p, p, 3 })
    x = tide.einsum("nhwpqc->nchpwq", x)
    -- imgs = x.reshape(shape=(x.shape[0], 3, h * p, h * p))
    local imgs = x:reshape({ x.shape[1], 3, h * p, h * p })
    return imgs
end

-- def random_masking(self, x, mask_ratio):  (noise given: torch.rand(N, L) in the source)
function MaskedAutoencoderViT:random_masking(x, mask_ratio, noise)
    -- N, L, D = x.shape  # batch, length, dim
    local N, L, D = x.shape[1], x.shape[2], x.shape[3]
    -- len_keep = int(L * (1 - mask_ratio))
    local len_keep = math.floor(L * (1 - mask_ratio))

    -- noise = torch.rand(N, L, device=x.device)  # noise in [0, 1]
    noise = noise or tide.rand({ N, L }, { device = x.device })

    -- sort noise for each sample
    -- ids_shuffle = torch.argsort(noise, dim=1)  # ascend: small is keep, large is remove
    local ids_shuffle = tide.argsort(noise, { dim = 2 })
    local ids_restore = tide.argsort(ids_shuffle, { dim = 2 })

    -- keep the first subset
    -- ids_keep = ids_shuffle[:, :len_keep]
    local ids_keep = ids_shuffle[{ {}, { 1, len_keep } }]
    -- x_masked = torch.gather(x, dim=1, index=ids_keep.unsqueeze(-1).repeat(1, 1, D))
    local x_masked = tide.gather(x, 2, ids_keep:unsqueeze(-1)["repeat"](ids_keep:unsqueeze(-1),
        1, 1, D))

    -- generate the binary mask: 0 is keep, 1 is remove
    -- mask = torch.ones([N, L], device=x.device)
    local mask = tide.ones({ N, L }, { device = x.device })
    -- mask[:, :len_keep] = 0
    mask[{ {}, { 1, len_keep } }] = 0
    -- unshuffle to get the binary mask
    -- mask = torch.gather(mask, dim=1, index=ids_restore)
    mask = tide.gather(mask, 2, ids_restore)

    return x_masked, mask, ids_restore
end

function MaskedAutoencoderViT:forward_encoder(x, mask_ratio, noise)
    -- embed patches
    x = self.patch_embed(x)

    -- add pos embed w/o cls token
    -- x = x + self.pos_embed[:, 1:, :]
    x = x + self.pos_embed[{ {}, { 2, -1 }, {} }]

    -- masking: length -> length * mask_ratio
    local mask, ids_restore
    x, mask, ids_restore = self:random_masking(x, mask_ratio, noise)

    -- append cls token
    -- cls_token = self.cls_token + self.pos_embed[:, :1, :]
    local cls_token = self.cls_token + self.pos_embed[{ {}, { 1, 1 }, {} }]
    -- cls_tokens = cls_token.expand(x.shape[0], -1, -1)
    local cls_tokens = cls_token:expand(x.shape[1], -1, -1)
    -- x = torch.cat((cls_tokens, x), dim=1)
    x = tide.cat({ cls_tokens, x }, 2)

    -- apply Transformer blocks
    -- for blk in self.blocks:
    for _, blk in ipairs(self.blocks) do
        x = blk(x)
    end
    x = self.norm(x)

    return x, mask, ids_restore
end

function MaskedAutoencoderViT:forward_decoder(x, ids_restore)
    -- embed tokens
    x = self.decoder_embed(x)

    -- append mask tokens to sequence
    -- mask_tokens = self.mask_token.repeat(x.shape[0], ids_restore.shape[1] + 1 - x.shape[1], 1)
    local mask_tokens = self.mask_token["repeat"](self.mask_token, x.shape[1],
        ids_restore.shape[2] + 1 - x.shape[2], 1)
    -- x_ = torch.cat([x[:, 1:, :], mask_tokens], dim=1)  # no cls token
    local x_ = tide.cat({ x[{ {}, { 2, -1 }, {} }], mask_tokens }, 2)
    -- x_ = torch.gather(x_, dim=1, index=ids_restore.unsqueeze(-1).repeat(1, 1, x.shape[2]))
    local index = ids_restore:unsqueeze(-1)
    x_ = tide.gather(x_, 2, index["repeat"](index, 1, 1, x.shape[3])) -- unshuffle
    -- x = torch.cat([x[:, :1, :], x_], dim=1)  # append cls token
    x = tide.cat({ x[{ {}, { 1, 1 }, {} }], x_ }, 2)

    -- add pos embed
    x = x + self.decoder_pos_embed

    -- apply Transformer blocks
    for _, blk in ipairs(self.decoder_blocks) do
        x = blk(x)
    end
    x = self.decoder_norm(x)

    -- predictor projection
    x = self.decoder_pred(x)

    -- remove cls token
    -- x = x[:, 1:, :]
    x = x[{ {}, { 2, -1 }, {} }]

    return x
end

function MaskedAutoencoderViT:forward_loss(imgs, pred, mask)
    local target = self:patchify(imgs)
    if self.norm_pix_loss then
        -- mean = target.mean(dim=-1, keepdim=True)
        local mean = target:mean({ dim = -1, keepdim = true })
        local var = target:var({ dim = -1, keepdim = true })
        -- target = (target - mean) / (var + 1.e-6)**.5
        target = (target - mean) / (var + 1.e-6) ^ .5
    end

    -- loss = (pred - target) ** 2
    local loss = (pred - target) ^ 2
    -- loss = loss.mean(dim=-1)  # [N, L], mean loss per patch
    loss = loss:mean({ dim = -1 })

    -- loss = (loss * mask).sum() / mask.sum()  # mean loss on removed patches
    loss = (loss * mask):sum() / mask:sum()
    return loss
end

-- def forward(self, imgs, mask_ratio=0.75):  (noise: see random_masking)
function MaskedAutoencoderViT:forward(imgs, mask_ratio, noise)
    mask_ratio = mask_ratio or 0.75
    local latent, mask, ids_restore = self:forward_encoder(imgs, mask_ratio, noise)
    local pred = self:forward_decoder(latent, ids_restore) -- [N, L, p*p*3]
    local loss = self:forward_loss(imgs, pred, mask)
    return loss, pred, mask
end

-- PyTorch 1.13's values (/tmp script, printed as Lua)
local REF = {
    pos_embed = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0,
        0, 1, 1, 1, 1, 0.841470957, 0.099833414, 0.00999983307, 0.000999999815, 0.540302277,
        0.995004177, 0.999949992, 0.999999523, 0, 0, 0, 0, 1, 1, 1, 1, 0.909297407, 0.198669329,
        0.0199986659, 0.0019999987, -0.416146845, 0.980066597, 0.999800026, 0.999997973, 0, 0, 0,
        0, 1, 1, 1, 1, 0.141120002, 0.295520216, 0.029995501, 0.0029999956, -0.989992499,
        0.955336511, 0.999550045, 0.99999553, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1,
        0.841470957, 0.099833414, 0.00999983307, 0.000999999815, 0.540302277, 0.995004177,
        0.999949992, 0.999999523, 0.841470957, 0.099833414, 0.00999983307, 0.000999999815,
        0.540302277, 0.995004177, 0.999949992, 0.999999523, 0.841470957, 0.099833414,
        0.00999983307, 0.000999999815, 0.540302277, 0.995004177, 0.999949992, 0.999999523,
        0.909297407, 0.198669329, 0.0199986659, 0.0019999987, -0.416146845, 0.980066597,
        0.999800026, 0.999997973, 0.841470957, 0.099833414, 0.00999983307, 0.000999999815,
        0.540302277, 0.995004177, 0.999949992, 0.999999523, 0.141120002, 0.295520216, 0.029995501,
        0.0029999956, -0.989992499, 0.955336511, 0.999550045, 0.99999553, 0.841470957,
        0.099833414, 0.00999983307, 0.000999999815, 0.540302277, 0.995004177, 0.999949992,
        0.999999523, 0, 0, 0, 0, 1, 1, 1, 1, 0.909297407, 0.198669329, 0.0199986659, 0.0019999987,
        -0.416146845, 0.980066597, 0.999800026, 0.999997973, 0.841470957, 0.099833414,
        0.00999983307, 0.000999999815, 0.540302277, 0.995004177, 0.999949992, 0.999999523,
        0.909297407, 0.198669329, 0.0199986659, 0.0019999987, -0.416146845, 0.980066597,
        0.999800026, 0.999997973, 0.909297407, 0.198669329, 0.0199986659, 0.0019999987,
        -0.416146845, 0.980066597, 0.999800026, 0.999997973, 0.909297407, 0.198669329,
        0.0199986659, 0.0019999987, -0.416146845, 0.980066597, 0.999800026, 0.999997973,
        0.141120002, 0.295520216, 0.029995501, 0.0029999956, -0.989992499, 0.955336511,
        0.999550045, 0.99999553, 0.909297407, 0.198669329, 0.0199986659, 0.0019999987,
        -0.416146845, 0.980066597, 0.999800026, 0.999997973, 0, 0, 0, 0, 1, 1, 1, 1, 0.141120002,
        0.295520216, 0.029995501, 0.0029999956, -0.989992499, 0.955336511, 0.999550045,
        0.99999553, 0.841470957, 0.099833414, 0.00999983307, 0.000999999815, 0.540302277,
        0.995004177, 0.999949992, 0.999999523, 0.141120002, 0.295520216, 0.029995501,
        0.0029999956, -0.989992499, 0.955336511, 0.999550045, 0.99999553, 0.909297407,
        0.198669329, 0.0199986659, 0.0019999987, -0.416146845, 0.980066597, 0.999800026,
        0.999997973, 0.141120002, 0.295520216, 0.029995501, 0.0029999956, -0.989992499,
        0.955336511, 0.999550045, 0.99999553, 0.141120002, 0.295520216, 0.029995501, 0.0029999956,
        -0.989992499, 0.955336511, 0.999550045, 0.99999553, 0.141120002, 0.295520216, 0.029995501,
        0.0029999956, -0.989992499, 0.955336511, 0.999550045, 0.99999553 },
    patchify_row = { 0.760294557, -0.837660193, 0.901058495, 0.999975264, -0.992544234,
        0.968563199, 0.769352019, -0.68061918, 0.580537558, 0.176890492, -0.0485883392,
        -0.0805239901, -0.481709301, 0.364769697, -0.241747811, 0.196116388, -0.320838422,
        0.4402107, 0.781705499, -0.855551183, 0.915131211, 0.999646246, -0.987884879, 0.959651232,
        -0.955873191, 0.985760212, -0.999210417, -0.920350134, 0.862280726, -0.789833367,
        -0.451972008, 0.333257109, -0.208985373, 0.228975609, -0.352502525, 0.470151752,
        0.0936154798, 0.0354585536, -0.163941339, -0.569787502, 0.67093277, -0.760890722,
        -0.965210497, 0.990856826, -0.999981344, -0.906679928, 0.844765425, -0.768765092 },
    patchify_cks = { -10.4940521 },
    x_masked = { 0.949896216, -0.348697186, -0.244501457, 0.434841454, 1.33921564, 1.34608114,
        0.467770934, 0.0022675395, -0.479211986, 0.446229488, 0.510124624, 0.0479324497,
        -1.61280584, 0.239051163, 0.966808438, 1.79483008, 0.985110521, 1.21175659, 0.405837804,
        -0.615131497, 0.167479038, 0.889736354, 1.67216563, 1.57854044, 0.543867707, -0.990915775,
        -0.99556303, 0.00257911743, 0.415670246, 1.65477061, 0.800147414, 0.249324203,
        0.625220478, 1.31424272, 0.758140564, -0.120718874, -1.68989146, 0.476436138, 1.19782519,
        1.50846481, 0.0435917675, -0.74085927, -1.00917125, -0.442231089, 1.41549158, 1.73209739,
        1.26980555, 0.626537442, 1.43490446, 1.05782461, -0.186460063, -1.00952399, 0.394665122,
        1.49444795, 2.00479603, 1.28176439, -0.131332517, -1.35525703, -0.643981636, 0.601820052,
        1.56621695, 1.24915469, 0.216869235, 0.129765987, 0.595185757, 0.633701682, 1.0059998,
        0.700683713, -0.6125561, 0.144873321, 0.364744425, 1.0932976, 0.492575645, 0.0899611115,
        -0.68901664, -0.976665556, 0.600579679, 1.51212072, 1.88107228, 1.41239905, 1.42726815,
        0.877779961, -0.447966218, -0.80081898, -1.11339295, 1.69023442, 1.74501026, 0.801227629,
        -0.316853285, -1.04647171, -0.172600701, 0.72941941, 1.21296239, 0.794526637, 0.149248362,
        0.521793127, 0.907492757, 0.133370727, -0.514868855, -0.389097273, 1.29743886, 1.70977163,
        1.30136001, 0.415228963, -0.930449188, -0.384467989, 0.192336977, 0.584435403,
        -0.798346281, 0.456540912, 0.353691638, 1.00974262, 1.53520262, 1.43870652, -0.0366184562,
        -0.980937481, -1.69148648, 1.33517802, 1.99440718, 1.38716555, 0.0440129638, -1.26228976,
        -0.74693501, 0.504122376, 0.631349802, 1.35289454, 0.305003583, 0.0928168297 },
    mask = { 1, 1, 1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 0,
        0, 1, 1, 1 },
    ids_restore = { 8, 15, 9, 2, 3, 10, 14, 7, 1, 4, 11, 13, 6, 0, 5, 12, 12, 5, 0, 6, 13, 11, 4,
        1, 7, 14, 10, 3, 2, 8, 15, 9 },
    latent = { 0.783085048, -0.147903994, 1.41980064, 2.0653398, 0.225635141, -1.3103404,
        -0.722788274, 0.233533874, -0.291367978, -1.46915269, -1.27170587, 0.318589777,
        0.886126459, -0.416650414, -0.7419101, 1.49770117, 0.396078706, 1.41546142, -0.476020515,
        -1.99271154, -0.720221162, 0.753298581, 0.0576504543, -1.24562836, -0.949252665,
        0.555044115, 0.877200007, -0.490147918, -1.15614188, 0.725164473, 1.98832953, 0.277037531,
        0.42557922, 1.56307077, -0.506320834, -2.1546042, -0.799055457, 0.743238926, 0.10684929,
        -1.18689167, -0.874914408, 0.511013806, 0.780351698, -0.536900997, -1.00221264,
        0.900311947, 1.97811639, 0.0302127339, 0.269169927, 1.5028168, -0.486326754, -2.1440475,
        -1.01175797, 0.690760374, 0.111862533, -1.149212, -0.889126599, 0.544496417, 0.841183484,
        -0.490125537, -0.893434286, 0.888623297, 2.02866507, 0.0984417051, 0.480479568,
        1.56246352, -0.549029171, -2.18607092, -0.780871391, 0.790898144, 0.135179058,
        -1.20502365, -0.924210906, 0.476807535, 0.796387076, -0.498243779, -0.918269813,
        0.854256809, 1.92003024, 0.025737863, 0.783246636, -0.147808731, 1.4197998, 2.06537533,
        0.225737348, -1.31028426, -0.722827554, 0.233480036, -0.291370273, -1.46914852,
        -1.27177215, 0.318480879, 0.886086166, -0.416611999, -0.741914332, 1.49763167,
        -0.0054757758, 1.35704148, -0.31996882, -2.11246538, -1.20914268, 0.486769766,
        0.115746163, -1.11366534, -0.965902448, 0.483922392, 0.968157649, -0.295377284,
        -0.903416693, 0.763403594, 2.18718648, 0.513988554, 0.425354689, 1.48264468, -0.589440763,
        -2.16223812, -0.923267245, 0.776440978, 0.121678494, -1.20165813, -0.904925227,
        0.516160369, 0.860005617, -0.430924743, -0.895800054, 0.827498794, 1.91684675,
        0.091525428, 0.343610853, 1.45850086, -0.474933982, -2.08428645, -0.786935449,
        0.743131757, 0.122631907, -1.21233821, -0.997152567, 0.489207268, 0.887146592,
        -0.39877829, -1.0731833, 0.737672329, 1.96874821, 0.276528537, 0.378954589, 1.51430285,
        -0.532594979, -2.19348574, -1.03180814, 0.710875332, 0.147572547, -1.15157688,
        -0.898583949, 0.487310112, 0.851174116, -0.390172005, -0.916546285, 0.866933584,
        1.95663917, 0.117206365 },
    pred_row = { 0.0213033259, -0.664539933, 0.331524968, -0.645718157, 0.66592598, -0.51470989,
        0.898129821, -0.37306577, 0.92310667, -0.294163495, 0.7099666, -0.284920573, 0.320443183,
        -0.286656737, -0.116907075, -0.214074105, -0.464138031, -0.0108828545, -0.634221256,
        0.308459461, -0.624226034, 0.654330432, -0.505628645, 0.898721695, -0.378282815,
        0.935293376, -0.313256234, 0.732192993, -0.315075874, 0.350375682, -0.323206842,
        -0.0823716447, -0.25148946, -0.428887367, -0.0438913852, -0.602743268, 0.283979893,
        -0.60108161, 0.640910685, -0.494618684, 0.897317767, -0.381543994, 0.945577502,
        -0.330615669, 0.752863467, -0.343941629, 0.379305929, -0.359077275 },
    pred_cks = { 4.25471438 },
    unpatchify_cks = { -23.1021903 },
    loss_False = { 0.837458193 },
    gimg_cks_False = { 0.0191644438 },
    gimg_row_False = { -0.000319909625, 0.00190041086, 0.00184094219, 0.00106864364,
        -0.00201857276, -0.000246678886, -0.00249870657, -0.000234943407, -0.00202677026,
        0.00197813334, 0.00106174371, 0.00242050574, -4.39008517e-07, 4.23725669e-06,
        8.34002913e-06, 1.13140177e-05 },
    gpw_False = { -1.169131e-06, -2.83127611e-06, -3.1618265e-06, -2.00532145e-06, 2.70691453e-06,
        9.39634276e-07, -1.26956957e-06, -2.8816753e-06, 2.26816428e-06, 3.21277753e-06,
        2.64636856e-06, 8.35332742e-07, -1.78601795e-06, 3.64783773e-07, 2.34401955e-06,
        3.22082747e-06 },
    gpw_cks_False = { -5.36351074e-05 },
    gdp_False = { 0.00959450938, -0.000680791214, -0.00113030465, -0.000777340028, -0.00543497037,
        -0.0105341636, 0.000687305001, 0.00121023529 },
    gdp_cks_False = { 0.0783211422 },
    apw_False = { -0.208483785, -0.119358696, -0.0127762286, 0.0968628675, 0.174843282,
        0.247793078, 0.305614084, 0.303641558, 0.241956249, 0.166084468, 0.066404134,
        -0.0435380004, -0.129179537, -0.235494867, -0.291801214, -0.30974856 },
    adp_False = { -0.170713067, -0.231377721, -0.279372841, -0.288202792, -0.256672293,
        -0.18904902, -0.114485279, -0.00578012876 },
    amt_False = { 0.133755744, 0.219184026, 0.273593307, 0.309619576, 0.285093755, 0.223335281,
        0.132702872, 0.0254631937 },
    loss2_False = { 0.692625046 },
    loss_True = { 1.31546247 },
    gimg_cks_True = { 0.026059295 },
    gimg_row_True = { -0.00157596986, 0.000552182726, 0.000495769724, 0.0004410572,
        -0.00234973547, 0.00162593403, -0.00100945425, 0.00155948591, -0.0025067993,
        0.00156065903, -0.000756484456, 0.00122672482, -5.91579578e-07, 3.80247138e-06,
        7.68187692e-06, 1.05215768e-05 },
    gpw_True = { -1.4269217e-06, -2.4229771e-06, -2.2794693e-06, -1.06389211e-06, 1.73430385e-06,
        1.56038524e-07, -1.49561481e-06, -2.44385706e-06, 2.13106637e-06, 2.48633205e-06,
        1.67223573e-06, 7.16617166e-08, -8.69069424e-07, 8.53436347e-07, 2.17455795e-06,
        2.47295043e-06 },
    gpw_cks_True = { -4.98554064e-05 },
    gdp_True = { 0.00942251924, 0.000444136938, -0.000786902674, -0.00084313273, -0.00639619911,
        -0.00802871212, 0.00132925238, 0.00047730541 },
    gdp_cks_True = { 0.0817438755 },
    apw_True = { -0.208468571, -0.119364597, -0.0127883805, 0.0968193635, 0.174863815,
        0.248290047, 0.305625826, 0.303635389, 0.241959065, 0.166093498, 0.0664259344,
        -0.0424317308, -0.129237607, -0.23564586, -0.291797906, -0.309739232 },
    adp_True = { -0.170713067, -0.251377344, -0.279372871, -0.288202792, -0.256672293,
        -0.18904902, -0.114485346, -0.00578000117 },
    amt_True = { 0.133755744, 0.219184026, 0.273593307, 0.309619576, 0.285093755, 0.223335281,
        0.132702872, 0.0254631937 },
    loss2_True = { 1.16888058 },
}

---------------------------------------------------------------------------------------------
-- checks: PyTorch 1.13's values (REF) from the same classes on the same formulas
---------------------------------------------------------------------------------------------
-- V(shape, s, off, step): sin(step k + off) * s over the elements in order, float32
local function V(shape, s, off, step)
    local n = 1
    for _, d in ipairs(shape) do n = n * d end
    return (tide.arange(0, n):double():mul(step or 0.7):add(off or 0):sin() * (s or 1.0))
        :float():view(shape)
end

local function vals(t)
    return t:detach():double():reshape(-1):tolist()
end

-- a weighted checksum of every element: sum(t * sin(0.3 k + 0.2))
local function cks(t)
    local f = t:detach():double():reshape(-1)
    return (f * (tide.arange(0, f:numel()):double() * 0.3 + 0.2):sin()):sum():item()
end

-- the trainable parameters in the reference's order (blocks.0 is PyTorch's name of blocks[1])
local NAMES = { "cls_token", "mask_token", "patch_embed.proj.weight", "patch_embed.proj.bias" }
for _, pre in ipairs({ "blocks.0.", "norm.", "decoder_embed.", "decoder_blocks.0.",
    "decoder_norm.", "decoder_pred." }) do
    local leaves = { "weight", "bias" }
    if pre:find("blocks") then
        leaves = { "norm1.weight", "norm1.bias", "attn.qkv.weight", "attn.qkv.bias",
            "attn.proj.weight", "attn.proj.bias", "norm2.weight", "norm2.bias",
            "mlp.fc1.weight", "mlp.fc1.bias", "mlp.fc2.weight", "mlp.fc2.bias" }
    end
    for _, leaf in ipairs(leaves) do NAMES[#NAMES + 1] = pre .. leaf end
end

-- the model at the brief's sizes, each parameter j (0-based) set to 0.3 sin(0.37 k + 0.5 j),
-- plus 1 for a LayerNorm weight
local function build(norm_pix_loss)
    tide.manual_seed(0)
    local m = MaskedAutoencoderViT({ img_size = 16, patch_size = 4, in_chans = 3, embed_dim = 16,
        depth = 1, num_heads = 2, decoder_embed_dim = 8, decoder_depth = 1,
        decoder_num_heads = 2, mlp_ratio = 4., norm_pix_loss = norm_pix_loss })
    local ps = {}
    for name, p in m:named_parameters() do ps[name] = p end
    local list = {}
    tide.no_grad(function()
        for j, name in ipairs(NAMES) do
            local p = assert(ps[name] or ps[name:gsub("blocks%.0%.", "blocks.1.")], name)
            local base = name:find("norm%d?%.weight$") and 1.0 or 0.0
            p:copy_(V(p.shape, 0.3, 0.5 * (j - 1), 0.37) + base)
            list[j] = p
        end
    end)
    return m, ps, list
end

local IMGS = V({ 2, 3, 16, 16 })
local NOISE = V({ 2, 16 }, 0.5, 0.2, 1.3) + 0.5
local TOL = 2e-5

describe("facebookresearch/mae models_mae.py (ported_scripts196)", function()
    it("get_2d_sincos_pos_embed, patchify / unpatchify", function()
        local m = build(false)
        assert.same({ 1, 17, 16 }, m.pos_embed.shape)
        assert.is_false(m.pos_embed.requires_grad)
        assert_close_list(REF.pos_embed, vals(m.pos_embed[1]), 1e-6, "pos_embed")
        local x = m:patchify(IMGS)
        assert.same({ 2, 16, 48 }, x.shape)
        assert_close_list(REF.patchify_row, vals(x[2][6]), 1e-6, "patchify")
        assert_close_list(REF.patchify_cks, { cks(x) }, 1e-6, "patchify checksum")
        assert.is_true(tide.equal(m:unpatchify(x), IMGS))
    end)

    it("random_masking: argsort of the given noise, gather, the binary mask", function()
        local m = build(false)
        local pe = m.patch_embed(IMGS) + m.pos_embed[{ {}, { 2, -1 }, {} }]
        local xm, mask, ids_restore = m:random_masking(pe, 0.75, NOISE)
        assert.same({ 2, 4, 16 }, xm.shape)
        assert_close_list(REF.x_masked, vals(xm), TOL, "x_masked")
        assert.same(REF.mask, vals(mask))
        assert.same("int64", ids_restore.dtype)
        -- 1-based positions: PyTorch's plus one
        local want = {}
        for i, v in ipairs(REF.ids_restore) do want[i] = v + 1 end
        assert.same(want, vals(ids_restore))
        assert.equal(24, mask:sum():item())
    end)

    it("forward_encoder, forward_decoder", function()
        local m = build(false)
        local latent, mask, ids_restore = m:forward_encoder(IMGS, 0.75, NOISE)
        assert.same({ 2, 5, 16 }, latent.shape)
        assert_close_list(REF.latent, vals(latent), TOL, "latent")
        assert.same(REF.mask, vals(mask))
        local pred = m:forward_decoder(latent, ids_restore)
        assert.same({ 2, 16, 48 }, pred.shape)
        assert_close_list(REF.pred_row, vals(pred[2][4]), TOL, "pred")
        assert_close_list(REF.pred_cks, { cks(pred) }, TOL, "pred checksum")
        assert_close_list(REF.unpatchify_cks, { cks(m:unpatchify(pred)) }, TOL, "unpatchify")
    end)

    for _, npl in ipairs({ false, true }) do
        local k = tostring(npl):gsub("^%l", string.upper)
        it("forward, forward_loss (norm_pix_loss=" .. k .. "), gradients, one AdamW step",
            function()
            local m, ps, list = build(npl)
            local im = IMGS:clone():requires_grad_()
            local loss, pred, mask = m(im, 0.75, NOISE)
            assert.same({ 2, 16, 48 }, pred.shape)
            assert.same(REF.mask, vals(mask))
            assert_close_list(REF["loss_" .. k], { loss:item() }, TOL, "loss")
            loss:backward()
            assert_close_list(REF["gimg_cks_" .. k], { cks(im.grad) }, 1e-4, "images' grad")
            assert_close_list(REF["gimg_row_" .. k], vals(im.grad[1][2][3]), 1e-4, "grad row")
            local pw, dp = ps["patch_embed.proj.weight"], ps["decoder_pred.weight"]
            assert_close_list(REF["gpw_" .. k], vals(pw.grad[2][3]), 1e-4, "proj.weight grad")
            assert_close_list(REF["gpw_cks_" .. k], { cks(pw.grad) }, 1e-4, "proj.weight grad")
            assert_close_list(REF["gdp_" .. k], vals(dp.grad[5]), 1e-4, "decoder_pred grad")
            assert_close_list(REF["gdp_cks_" .. k], { cks(dp.grad) }, 1e-4, "decoder_pred grad")
            -- pos_embed is frozen: no gradient
            assert.is_nil(m.pos_embed.grad)
            local opt = tide.optim.AdamW(list, { lr = 1e-2, betas = { 0.9, 0.95 },
                weight_decay = 0.05 })
            opt:step()
            assert_close_list(REF["apw_" .. k], vals(pw[2][3]), 1e-5, "proj.weight after step")
            assert_close_list(REF["adp_" .. k], vals(dp[5]), 1e-5, "decoder_pred after step")
            assert_close_list(REF["amt_" .. k], vals(m.mask_token), 1e-5, "mask_token")
            opt:zero_grad()
            local loss2 = m(IMGS, 0.75, NOISE)
            assert_finite(loss2:item(), "loss after a step")
            assert_close_list(REF["loss2_" .. k], { loss2:item() }, 1e-4, "loss after a step")
            assert.is_true(loss2:item() < loss:item())
        end)
    end
end)
