-- ported_scripts55_spec.lua — facebookresearch/mae's models_mae.py (MaskedAutoencoderViT with timm
-- 0.3.2's PatchEmbed/Block written out, util/pos_embed.py's numpy sin-cos embedding in tide) and
-- facebookresearch/dinov2's layers (Mlp, SwiGLUFFNFused, LayerScale, DropPath, PatchEmbed,
-- Attention/MemEffAttention's plain path, NestedTensorBlock with drop_add_residual_stochastic_depth,
-- DINOHead with a weight_norm'ed last layer) and models/vision_transformer.py's
-- DinoVisionTransformer (interpolate_pos_encoding, prepare_tokens_with_masks, forward_features,
-- get_intermediate_layers), ported line for line at tiny sizes. The Python line stands above each
-- Lua line that differs; values were computed with PyTorch 1.13 / numpy (dinov2's
-- F.scaled_dot_product_attention written as softmax(q k^T / sqrt(d)) v there).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local isinstance = tide.isinstance

-- for i, (n, p) in enumerate(sorted(m.named_parameters())):
--     p.copy_((torch.arange(p.numel(), dtype=torch.float32)*0.37 + (i+1)).sin().reshape(p.shape)*0.3)
local function det(m)
    local nps = m:named_parameters()
    table.sort(nps, function(a, b) return a[1] < b[1] end)
    tide.no_grad(function()
        for i, np in ipairs(nps) do
            local p = np[2]
            p:copy_(((tide.arange(p:numel(), { dtype = "float32" }) * 0.37 + i):sin()
                :reshape(p.shape) * 0.3))
        end
    end)
    return m
end
-- (torch.arange(n, dtype=torch.float32)*0.13).sin().reshape(s)
local function inp(...)
    local s, n = { ... }, 1
    for _, v in ipairs(s) do n = n * v end
    return (tide.arange(n, { dtype = "float32" }) * 0.13):sin():reshape(s)
end
-- the Python check prints sum, the first 4 and the last value of y.flatten()
local function check(y, sum, first, last)
    y = y:detach():flatten()
    assert.is_true(math.abs(y:sum():item() - sum) < 1e-4 * math.max(1, math.abs(sum)),
        "sum " .. y:sum():item() .. " vs " .. sum)
    for i, v in ipairs(first) do
        assert.is_true(math.abs(y[i]:item() - v) < 1e-5, "y[" .. i .. "] " .. y[i]:item() .. " vs " .. v)
    end
    assert.is_true(math.abs(y[-1]:item() - last) < 1e-5, "last " .. y[-1]:item() .. " vs " .. last)
end
-- from functools import partial
local partial = tide.utils.partial

---------------------------------------------------------------------------------------------
-- 1. facebookresearch/mae: timm 0.3.2's PatchEmbed, Mlp, Attention, Block (what models_mae.py
-- imports), util/pos_embed.py, models_mae.py
---------------------------------------------------------------------------------------------
-- timm 0.3.2 models/vision_transformer.py (written from that release)
local TimmPatchEmbed = nn.Module:extend("PatchEmbed")
function TimmPatchEmbed:init(img_size, patch_size, in_chans, embed_dim)
    -- img_size = to_2tuple(img_size); patch_size = to_2tuple(patch_size)
    img_size, patch_size = { img_size, img_size }, { patch_size, patch_size }
    -- num_patches = (img_size[1] // patch_size[1]) * (img_size[0] // patch_size[0])
    local num_patches = math.floor(img_size[2] / patch_size[2]) * math.floor(img_size[1] / patch_size[1])
    self.img_size = img_size
    self.patch_size = patch_size
    self.num_patches = num_patches
    -- self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)
    self.proj = nn.Conv2d(in_chans, embed_dim, { kernel_size = patch_size, stride = patch_size })
end
function TimmPatchEmbed:forward(x)
    -- B, C, H, W = x.shape
    local _, _, H, W = unpack(x.shape)
    -- assert H == self.img_size[0] and W == self.img_size[1], f"Input image size ({H}*{W}) doesn't match model ..."
    assert(H == self.img_size[1] and W == self.img_size[2], string.format(
        "Input image size (%d*%d) doesn't match model (%d*%d).", H, W, self.img_size[1], self.img_size[2]))
    -- x = self.proj(x).flatten(2).transpose(1, 2)
    x = self.proj(x):flatten(3):transpose(2, 3)
    return x
end

local TimmMlp = nn.Module:extend("Mlp")
nn.signature(TimmMlp, "in_features, hidden_features=None, out_features=None, act_layer=nn.GELU, drop=0.")
function TimmMlp:init(in_features, hidden_features, out_features, act_layer, drop)
    act_layer = act_layer or nn.GELU
    out_features = out_features or in_features
    hidden_features = hidden_features or in_features
    self.fc1 = nn.Linear(in_features, hidden_features)
    self.act = act_layer()
    self.fc2 = nn.Linear(hidden_features, out_features)
    self.drop = nn.Dropout(drop)
end
function TimmMlp:forward(x)
    x = self.fc1(x)
    x = self.act(x)
    x = self.drop(x)
    x = self.fc2(x)
    x = self.drop(x)
    return x
end

local TimmAttention = nn.Module:extend("Attention")
nn.signature(TimmAttention, "dim, num_heads=8, qkv_bias=False, qk_scale=None, attn_drop=0., proj_drop=0.")
function TimmAttention:init(dim, num_heads, qkv_bias, qk_scale, attn_drop, proj_drop)
    self.num_heads = num_heads
    -- head_dim = dim // num_heads
    local head_dim = math.floor(dim / num_heads)
    -- self.scale = qk_scale or head_dim ** -0.5
    self.scale = qk_scale or head_dim ^ -0.5
    -- self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
    self.qkv = nn.Linear(dim, dim * 3, { bias = qkv_bias })
    self.attn_drop = nn.Dropout(attn_drop)
    self.proj = nn.Linear(dim, dim)
    self.proj_drop = nn.Dropout(proj_drop)
end
function TimmAttention:forward(x)
    -- B, N, C = x.shape
    local B, N, C = unpack(x.shape)
    -- qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
    local qkv = self.qkv(x):reshape(B, N, 3, self.num_heads, math.floor(C / self.num_heads))
        :permute(3, 1, 4, 2, 5)
    -- q, k, v = qkv[0], qkv[1], qkv[2]
    local q, k, v = qkv[1], qkv[2], qkv[3]
    -- attn = (q @ k.transpose(-2, -1)) * self.scale
    local attn = (q:matmul(k:transpose(-2, -1))) * self.scale
    attn = attn:softmax({ dim = -1 })
    attn = self.attn_drop(attn)
    -- x = (attn @ v).transpose(1, 2).reshape(B, N, C)
    x = attn:matmul(v):transpose(2, 3):reshape(B, N, C)
    x = self.proj(x)
    x = self.proj_drop(x)
    return x
end

local TimmBlock = nn.Module:extend("Block")
nn.signature(TimmBlock, "dim, num_heads, mlp_ratio=4., qkv_bias=False, qk_scale=None, drop=0., " ..
    "attn_drop=0., drop_path=0., act_layer=nn.GELU, norm_layer=nn.LayerNorm")
function TimmBlock:init(dim, num_heads, mlp_ratio, qkv_bias, qk_scale, drop, attn_drop, drop_path,
                        act_layer, norm_layer)
    norm_layer = norm_layer or nn.LayerNorm
    self.norm1 = norm_layer(dim)
    self.attn = TimmAttention(dim, { num_heads = num_heads, qkv_bias = qkv_bias, qk_scale = qk_scale,
        attn_drop = attn_drop, proj_drop = drop })
    -- self.drop_path = DropPath(drop_path) if drop_path > 0. else nn.Identity()  (drop_path=0 here)
    self.drop_path = nn.Identity()
    self.norm2 = norm_layer(dim)
    -- mlp_hidden_dim = int(dim * mlp_ratio)
    local mlp_hidden_dim = math.floor(dim * mlp_ratio)
    self.mlp = TimmMlp({ in_features = dim, hidden_features = mlp_hidden_dim, act_layer = act_layer,
        drop = drop })
end
function TimmBlock:forward(x)
    x = x + self.drop_path(self.attn(self.norm1(x)))
    x = x + self.drop_path(self.mlp(self.norm2(x)))
    return x
end

-- util/pos_embed.py (numpy in the script; tide tensors here, float64 as numpy's np.float)
local get_1d_sincos_pos_embed_from_grid
-- def get_2d_sincos_pos_embed(embed_dim, grid_size, cls_token=False):
local function get_2d_sincos_pos_embed(embed_dim, grid_size, cls_token)
    -- grid_h = np.arange(grid_size, dtype=np.float32)
    local grid_h = tide.arange(grid_size, { dtype = "float32" })
    local grid_w = tide.arange(grid_size, { dtype = "float32" })
    -- grid = np.meshgrid(grid_w, grid_h)  # here w goes first
    local grid = tide.meshgrid({ grid_w, grid_h }, { indexing = "xy" })
    -- grid = np.stack(grid, axis=0)
    grid = tide.stack(grid, { dim = 1 })
    -- grid = grid.reshape([2, 1, grid_size, grid_size])
    grid = grid:reshape({ 2, 1, grid_size, grid_size })
    local function get_2d_sincos_pos_embed_from_grid(dim, g)
        assert(dim % 2 == 0)
        -- emb_h = get_1d_sincos_pos_embed_from_grid(embed_dim // 2, grid[0])  # (H*W, D/2)
        local emb_h = get_1d_sincos_pos_embed_from_grid(math.floor(dim / 2), g[1])
        local emb_w = get_1d_sincos_pos_embed_from_grid(math.floor(dim / 2), g[2])
        -- emb = np.concatenate([emb_h, emb_w], axis=1) # (H*W, D)
        return tide.cat({ emb_h, emb_w }, { dim = 2 })
    end
    local pos_embed = get_2d_sincos_pos_embed_from_grid(embed_dim, grid)
    if cls_token then
        -- pos_embed = np.concatenate([np.zeros([1, embed_dim]), pos_embed], axis=0)
        pos_embed = tide.cat({ tide.zeros({ 1, embed_dim }, { dtype = "float64" }), pos_embed }, { dim = 1 })
    end
    return pos_embed
end
-- def get_1d_sincos_pos_embed_from_grid(embed_dim, pos):
function get_1d_sincos_pos_embed_from_grid(embed_dim, pos)
    assert(embed_dim % 2 == 0)
    -- omega = np.arange(embed_dim // 2, dtype=np.float)
    local omega = tide.arange(math.floor(embed_dim / 2), { dtype = "float64" })
    -- omega /= embed_dim / 2.
    omega:div_(embed_dim / 2.)
    -- omega = 1. / 10000**omega  # (D/2,)
    omega = 1. / tide.pow(10000, omega)
    -- pos = pos.reshape(-1)  # (M,)
    pos = pos:reshape(-1):double()
    -- out = np.einsum('m,d->md', pos, omega)  # (M, D/2), outer product
    local out = tide.einsum("m,d->md", pos, omega)
    local emb_sin = tide.sin(out)
    local emb_cos = tide.cos(out)
    -- emb = np.concatenate([emb_sin, emb_cos], axis=1)  # (M, D)
    return tide.cat({ emb_sin, emb_cos }, { dim = 2 })
end

-- class MaskedAutoencoderViT(nn.Module):
local MaskedAutoencoderViT = nn.Module:extend("MaskedAutoencoderViT")
nn.signature(MaskedAutoencoderViT, "img_size=224, patch_size=16, in_chans=3, embed_dim=1024, depth=24, " ..
    "num_heads=16, decoder_embed_dim=512, decoder_depth=8, decoder_num_heads=16, mlp_ratio=4., " ..
    "norm_layer=nn.LayerNorm, norm_pix_loss=False")
function MaskedAutoencoderViT:init(img_size, patch_size, in_chans, embed_dim, depth, num_heads,
                                   decoder_embed_dim, decoder_depth, decoder_num_heads, mlp_ratio,
                                   norm_layer, norm_pix_loss)
    norm_layer = norm_layer or nn.LayerNorm
    -- MAE encoder specifics
    self.patch_embed = TimmPatchEmbed(img_size, patch_size, in_chans, embed_dim)
    local num_patches = self.patch_embed.num_patches

    -- self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
    self.cls_token = nn.Parameter(tide.zeros(1, 1, embed_dim))
    -- self.pos_embed = nn.Parameter(torch.zeros(1, num_patches + 1, embed_dim), requires_grad=False)
    self.pos_embed = nn.Parameter(tide.zeros(1, num_patches + 1, embed_dim), { requires_grad = false })

    -- self.blocks = nn.ModuleList([Block(embed_dim, num_heads, mlp_ratio, qkv_bias=True, qk_scale=None, norm_layer=norm_layer) for i in range(depth)])
    local blocks = {}
    for _ = 1, depth do
        blocks[#blocks + 1] = TimmBlock(embed_dim, num_heads, mlp_ratio, { qkv_bias = true,
            qk_scale = nil, norm_layer = norm_layer })
    end
    self.blocks = nn.ModuleList(blocks)
    self.norm = norm_layer(embed_dim)

    -- MAE decoder specifics
    -- self.decoder_embed = nn.Linear(embed_dim, decoder_embed_dim, bias=True)
    self.decoder_embed = nn.Linear(embed_dim, decoder_embed_dim, { bias = true })
    self.mask_token = nn.Parameter(tide.zeros(1, 1, decoder_embed_dim))
    self.decoder_pos_embed = nn.Parameter(tide.zeros(1, num_patches + 1, decoder_embed_dim),
        { requires_grad = false })
    local decoder_blocks = {}
    for _ = 1, decoder_depth do
        decoder_blocks[#decoder_blocks + 1] = TimmBlock(decoder_embed_dim, decoder_num_heads, mlp_ratio,
            { qkv_bias = true, qk_scale = nil, norm_layer = norm_layer })
    end
    self.decoder_blocks = nn.ModuleList(decoder_blocks)
    self.decoder_norm = norm_layer(decoder_embed_dim)
    -- self.decoder_pred = nn.Linear(decoder_embed_dim, patch_size**2 * in_chans, bias=True) # decoder to patch
    self.decoder_pred = nn.Linear(decoder_embed_dim, patch_size ^ 2 * in_chans, { bias = true })

    self.norm_pix_loss = norm_pix_loss
    self:initialize_weights()
end
function MaskedAutoencoderViT:initialize_weights()
    -- pos_embed = get_2d_sincos_pos_embed(self.pos_embed.shape[-1], int(self.patch_embed.num_patches**.5), cls_token=True)
    local pos_embed = get_2d_sincos_pos_embed(self.pos_embed.shape[-1],
        math.floor(self.patch_embed.num_patches ^ .5), true)
    -- self.pos_embed.data.copy_(torch.from_numpy(pos_embed).float().unsqueeze(0))
    self.pos_embed.data:copy_(pos_embed:float():unsqueeze(1))
    local decoder_pos_embed = get_2d_sincos_pos_embed(self.decoder_pos_embed.shape[-1],
        math.floor(self.patch_embed.num_patches ^ .5), true)
    self.decoder_pos_embed.data:copy_(decoder_pos_embed:float():unsqueeze(1))

    -- initialize patch_embed like nn.Linear (instead of nn.Conv2d)
    local w = self.patch_embed.proj.weight.data
    -- torch.nn.init.xavier_uniform_(w.view([w.shape[0], -1]))
    nn.init.xavier_uniform_(w:view({ w.shape[1], -1 }))

    -- torch.nn.init.normal_(self.cls_token, std=.02)
    nn.init.normal_(self.cls_token, { std = .02 })
    nn.init.normal_(self.mask_token, { std = .02 })

    -- self.apply(self._init_weights)
    self:apply(function(m) self:_init_weights(m) end)
end
function MaskedAutoencoderViT:_init_weights(m)
    if isinstance(m, nn.Linear) then
        nn.init.xavier_uniform_(m.weight)
        if isinstance(m, nn.Linear) and m.bias ~= nil then
            nn.init.constant_(m.bias, 0)
        end
    elseif isinstance(m, nn.LayerNorm) then
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
    local x = imgs:reshape({ shape = { imgs.shape[1], 3, h, p, w, p } })
    x = tide.einsum("nchpwq->nhwpqc", x)
    -- x = x.reshape(shape=(imgs.shape[0], h * w, p**2 * 3))
    x = x:reshape({ shape = { imgs.shape[1], h * w, p ^ 2 * 3 } })
    return x
end
function MaskedAutoencoderViT:unpatchify(x)
    local p = self.patch_embed.patch_size[1]
    -- h = w = int(x.shape[1]**.5)
    local h = math.floor(x.shape[2] ^ .5)
    local w = h
    assert(h * w == x.shape[2])
    -- x = x.reshape(shape=(x.shape[0], h, w, p, p, 3))
    x = x:reshape({ shape = { x.shape[1], h, w, p, p, 3 } })
    x = tide.einsum("nhwpqc->nchpwq", x)
    -- imgs = x.reshape(shape=(x.shape[0], 3, h * p, h * p))
    local imgs = x:reshape({ shape = { x.shape[1], 3, h * p, h * p } })
    return imgs
end
function MaskedAutoencoderViT:random_masking(x, mask_ratio)
    -- N, L, D = x.shape  # batch, length, dim
    local N, L, D = unpack(x.shape)
    -- len_keep = int(L * (1 - mask_ratio))
    local len_keep = math.floor(L * (1 - mask_ratio))

    -- noise = torch.rand(N, L, device=x.device)  # noise in [0, 1]
    local noise = tide.rand(N, L, { device = x.device })

    -- ids_shuffle = torch.argsort(noise, dim=1)  # ascend: small is keep, large is remove
    local ids_shuffle = tide.argsort(noise, { dim = 2 })
    local ids_restore = tide.argsort(ids_shuffle, { dim = 2 })

    -- ids_keep = ids_shuffle[:, :len_keep]
    local ids_keep = ids_shuffle[{ {}, { 1, len_keep } }]
    -- x_masked = torch.gather(x, dim=1, index=ids_keep.unsqueeze(-1).repeat(1, 1, D))
    local idx = ids_keep:unsqueeze(-1)
    local x_masked = tide.gather(x, { dim = 2, index = idx["repeat"](idx, 1, 1, D) })

    -- mask = torch.ones([N, L], device=x.device)
    local mask = tide.ones({ N, L }, { device = x.device })
    -- mask[:, :len_keep] = 0
    mask[{ {}, { 1, len_keep } }] = 0
    -- mask = torch.gather(mask, dim=1, index=ids_restore)
    mask = tide.gather(mask, { dim = 2, index = ids_restore })

    return x_masked, mask, ids_restore
end
function MaskedAutoencoderViT:forward_encoder(x, mask_ratio)
    x = self.patch_embed(x)
    -- x = x + self.pos_embed[:, 1:, :]
    x = x + self.pos_embed[{ {}, { 2, -1 }, {} }]
    local mask, ids_restore
    x, mask, ids_restore = self:random_masking(x, mask_ratio)
    -- cls_token = self.cls_token + self.pos_embed[:, :1, :]
    local cls_token = self.cls_token + self.pos_embed[{ {}, { 1, 1 }, {} }]
    -- cls_tokens = cls_token.expand(x.shape[0], -1, -1)
    local cls_tokens = cls_token:expand(x.shape[1], -1, -1)
    -- x = torch.cat((cls_tokens, x), dim=1)
    x = tide.cat({ cls_tokens, x }, { dim = 2 })
    -- for blk in self.blocks:
    for _, blk in ipairs(self.blocks) do
        x = blk(x)
    end
    x = self.norm(x)
    return x, mask, ids_restore
end
function MaskedAutoencoderViT:forward_decoder(x, ids_restore)
    x = self.decoder_embed(x)
    -- mask_tokens = self.mask_token.repeat(x.shape[0], ids_restore.shape[1] + 1 - x.shape[1], 1)
    local mask_tokens = self.mask_token["repeat"](self.mask_token, x.shape[1],
        ids_restore.shape[2] + 1 - x.shape[2], 1)
    -- x_ = torch.cat([x[:, 1:, :], mask_tokens], dim=1)  # no cls token
    local x_ = tide.cat({ x[{ {}, { 2, -1 }, {} }], mask_tokens }, { dim = 2 })
    -- x_ = torch.gather(x_, dim=1, index=ids_restore.unsqueeze(-1).repeat(1, 1, x.shape[2]))  # unshuffle
    local idx = ids_restore:unsqueeze(-1)
    x_ = tide.gather(x_, { dim = 2, index = idx["repeat"](idx, 1, 1, x.shape[3]) })
    -- x = torch.cat([x[:, :1, :], x_], dim=1)  # append cls token
    x = tide.cat({ x[{ {}, { 1, 1 }, {} }], x_ }, { dim = 2 })
    x = x + self.decoder_pos_embed
    for _, blk in ipairs(self.decoder_blocks) do
        x = blk(x)
    end
    x = self.decoder_norm(x)
    x = self.decoder_pred(x)
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
    local loss = (pred - target) ^ 2
    -- loss = loss.mean(dim=-1)  # [N, L], mean loss per patch
    loss = loss:mean({ dim = -1 })
    -- loss = (loss * mask).sum() / mask.sum()  # mean loss on removed patches
    loss = (loss * mask):sum() / mask:sum()
    return loss
end
function MaskedAutoencoderViT:forward(imgs, mask_ratio)
    local latent, mask, ids_restore = self:forward_encoder(imgs, mask_ratio)
    local pred = self:forward_decoder(latent, ids_restore) -- [N, L, p*p*3]
    local loss = self:forward_loss(imgs, pred, mask)
    return loss, pred, mask
end
-- def forward(self, imgs, mask_ratio=0.75):
nn.signature(MaskedAutoencoderViT, "imgs, mask_ratio=0.75", "forward")

describe("facebookresearch/mae models_mae.py", function()
    it("functools.partial is tide.utils.partial: positional first, keywords merged (the call's win)", function()
        -- norm_layer = partial(nn.LayerNorm, eps=1e-6)
        local norm_layer = partial(nn.LayerNorm, { eps = 1e-6 })
        local ln = norm_layer(4)
        assert.are.equal(1e-6, ln.eps)
        assert.are.same({ 4 }, ln.normalized_shape)
        assert.are.equal(1e-5, norm_layer(4, { eps = 1e-5 }).eps)
        -- LayerNorm/RMSNorm keep PyTorch's elementwise_affine attribute (was nil)
        assert.is_false(norm_layer(4, { elementwise_affine = false }).elementwise_affine)
        assert.is_true(ln.elementwise_affine)
        assert.is_true(nn.RMSNorm(4).elementwise_affine)
        assert.are.equal(nn.LayerNorm, norm_layer.func)
        assert.are.same({ eps = 1e-6 }, norm_layer.keywords)
        -- positional arguments come first: partial(F.pad, pad=(1, 1)) and partial(torch.clamp, min=0)
        local add3 = partial(function(a, b, c) return a + b + c end, 1, 2)
        assert.are.equal(6, add3(3))
        local clamp0 = partial(tide.clamp, { min = 0 })
        assert.are.same({ 0, 2 }, clamp0(tide.tensor({ -1, 2 })):tolist())
        assert.has_error(function() partial(nil, { eps = 1 }) end,
            "tide: utils.partial: the first argument is a nil, expected a function or class " ..
            "(functools.partial(nn.LayerNorm, eps=1e-6) is tide.utils.partial(nn.LayerNorm, {eps = 1e-6}))")
    end)

    it("get_2d_sincos_pos_embed matches numpy", function()
        -- get_2d_sincos_pos_embed(8, 3, cls_token=True)
        local e = get_2d_sincos_pos_embed(8, 3, true)
        assert.are.same({ 10, 8 }, e.shape)
        assert.is_true(math.abs(e:sum():item() - 35.42803) < 1e-4)
        local r5 = { 0.0, 0.0, 1.0, 1.0, 0.841471, 0.0099998, 0.5403023, 0.99995 }
        local last = { 0.9092974, 0.0199987, -0.4161468, 0.9998, 0.9092974, 0.0199987, -0.4161468, 0.9998 }
        for j = 1, 8 do
            assert.is_true(math.abs(e[5][j]:item() - r5[j]) < 1e-6)
            assert.is_true(math.abs(e[-1][j]:item() - last[j]) < 1e-6)
        end
    end)

    it("patchify/unpatchify, random_masking, and MaskedAutoencoderViT trains (norm_pix_loss too)", function()
        tide.manual_seed(0)
        -- partial(nn.LayerNorm, eps=1e-6)
        local norm_layer = partial(nn.LayerNorm, { eps = 1e-6 })
        for _, npl in ipairs({ false, true }) do
            local model = MaskedAutoencoderViT({ img_size = 8, patch_size = 2, in_chans = 3, embed_dim = 16,
                depth = 1, num_heads = 2, decoder_embed_dim = 8, decoder_depth = 1, decoder_num_heads = 2,
                mlp_ratio = 2, norm_layer = norm_layer, norm_pix_loss = npl })
            assert.is_false(model.pos_embed.requires_grad)
            assert.are.same({ 1, 17, 16 }, model.pos_embed.shape)
            assert.are.equal(1e-6, model.norm.eps)
            -- the frozen sin-cos embeddings are the numpy ones
            assert.is_true(tide.allclose(model.pos_embed[1],
                get_2d_sincos_pos_embed(16, 4, true):float()))
            local imgs = tide.randn(2, 3, 8, 8)
            local pt = model:patchify(imgs)
            assert.are.same({ 2, 16, 12 }, pt.shape)
            -- patch (0, 1)'s first pixel, channels last: imgs[0, :, 0, 2]
            assert.are.same(imgs[{ 1, {}, 1, 3 }]:tolist(), pt[{ 1, 2, { 1, 3 } }]:tolist())
            assert.is_true(tide.equal(model:unpatchify(pt), imgs))

            local x = tide.randn(2, 16, 4)
            local x_masked, mask, ids_restore = model:random_masking(x, 0.75)
            assert.are.same({ 2, 4, 4 }, x_masked.shape)
            assert.are.same({ 12, 12 }, mask:sum({ dim = 2 }):tolist())
            -- the kept rows are x's rows where mask is 0, in noise order
            for n = 1, 2 do
                local kept = x[n][mask[n]:eq(0)]
                assert.are.same(kept:sum():item(), x_masked[n]:sum():item())
            end
            assert.are.same({ 2, 16 }, ids_restore.shape)

            -- optimizer = torch.optim.AdamW(param_groups, lr=args.lr, betas=(0.9, 0.95))
            local optimizer = optim.AdamW(model:parameters(), { lr = 1e-2, betas = { 0.9, 0.95 } })
            local first, loss, pred
            for _ = 1, 4 do
                tide.manual_seed(3) -- the same mask each step, so the loss is comparable
                -- loss, _, _ = model(samples, mask_ratio=args.mask_ratio)
                loss, pred, mask = model(imgs, { mask_ratio = 0.75 })
                optimizer:zero_grad()
                loss:backward()
                optimizer:step()
                first = first or loss:item()
            end
            assert_finite(loss)
            assert.is_true(loss:item() < first)
            assert.are.same({ 2, 16, 12 }, pred.shape)
            assert.is_nil(model.pos_embed.grad)
        end
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. facebookresearch/dinov2: dinov2/layers/*.py, dinov2/models/vision_transformer.py
---------------------------------------------------------------------------------------------
-- layers/mlp.py
local Mlp = nn.Module:extend("Mlp")
nn.signature(Mlp, "in_features: int, hidden_features: Optional[int] = None, " ..
    "out_features: Optional[int] = None, act_layer: Callable[..., nn.Module] = nn.GELU, " ..
    "drop: float = 0.0, bias: bool = True")
function Mlp:init(in_features, hidden_features, out_features, act_layer, drop, bias)
    act_layer = act_layer or nn.GELU
    out_features = out_features or in_features
    hidden_features = hidden_features or in_features
    -- self.fc1 = nn.Linear(in_features, hidden_features, bias=bias)
    self.fc1 = nn.Linear(in_features, hidden_features, { bias = bias })
    self.act = act_layer()
    self.fc2 = nn.Linear(hidden_features, out_features, { bias = bias })
    self.drop = nn.Dropout(drop)
end
function Mlp:forward(x)
    x = self.fc1(x)
    x = self.act(x)
    x = self.drop(x)
    x = self.fc2(x)
    x = self.drop(x)
    return x
end

-- layers/swiglu_ffn.py
local SwiGLUFFN = nn.Module:extend("SwiGLUFFN")
nn.signature(SwiGLUFFN, "in_features: int, hidden_features: Optional[int] = None, " ..
    "out_features: Optional[int] = None, act_layer: Callable[..., nn.Module] = None, " ..
    "drop: float = 0.0, bias: bool = True")
function SwiGLUFFN:init(in_features, hidden_features, out_features, act_layer, drop, bias) -- luacheck: ignore
    out_features = out_features or in_features
    hidden_features = hidden_features or in_features
    self.w12 = nn.Linear(in_features, 2 * hidden_features, { bias = bias })
    self.w3 = nn.Linear(hidden_features, out_features, { bias = bias })
end
function SwiGLUFFN:forward(x)
    local x12 = self.w12(x)
    -- x1, x2 = x12.chunk(2, dim=-1)
    local x1, x2 = unpack(x12:chunk(2, { dim = -1 }))
    local hidden = F.silu(x1) * x2
    return self.w3(hidden)
end
-- SwiGLU = SwiGLUFFN (xFormers is not available)
-- class SwiGLUFFNFused(SwiGLU):
local SwiGLUFFNFused = SwiGLUFFN:extend("SwiGLUFFNFused")
nn.signature(SwiGLUFFNFused, "in_features: int, hidden_features: Optional[int] = None, " ..
    "out_features: Optional[int] = None, act_layer: Callable[..., nn.Module] = None, " ..
    "drop: float = 0.0, bias: bool = True")
function SwiGLUFFNFused:init(in_features, hidden_features, out_features, act_layer, drop, bias) -- luacheck: ignore
    out_features = out_features or in_features
    hidden_features = hidden_features or in_features
    -- hidden_features = (int(hidden_features * 2 / 3) + 7) // 8 * 8
    hidden_features = math.floor((math.floor(hidden_features * 2 / 3) + 7) / 8) * 8
    -- super().__init__(in_features=in_features, hidden_features=hidden_features, out_features=out_features, bias=bias)
    SwiGLUFFN.init(self, { in_features = in_features, hidden_features = hidden_features,
        out_features = out_features, bias = bias })
end

-- layers/layer_scale.py
local LayerScale = nn.Module:extend("LayerScale")
nn.signature(LayerScale, "dim: int, init_values: Union[float, Tensor] = 1e-5, inplace: bool = False, " ..
    "device: Optional[torch.device] = None, dtype: Optional[torch.dtype] = None")
function LayerScale:init(dim, init_values, inplace, device, dtype)
    self.inplace = inplace
    self.init_values = init_values
    -- self.gamma = nn.Parameter(torch.empty(dim, device=device, dtype=dtype))
    self.gamma = nn.Parameter(tide.empty(dim, { device = device, dtype = dtype }))
    self:reset_parameters()
end
function LayerScale:reset_parameters()
    nn.init.constant_(self.gamma, self.init_values)
end
function LayerScale:forward(x)
    -- return x.mul_(self.gamma) if self.inplace else x * self.gamma
    if self.inplace then return x:mul_(self.gamma) end
    return x * self.gamma
end

-- layers/drop_path.py
-- def drop_path(x, drop_prob: float = 0.0, training: bool = False):
local function drop_path(x, drop_prob, training)
    if drop_prob == 0.0 or not training then
        return x
    end
    local keep_prob = 1 - drop_prob
    -- shape = (x.shape[0],) + (1,) * (x.ndim - 1)  # work with diff dim tensors, not just 2D ConvNets
    local shape = { x.shape[1] }
    for _ = 1, x.ndim - 1 do shape[#shape + 1] = 1 end
    -- random_tensor = x.new_empty(shape).bernoulli_(keep_prob)
    local random_tensor = x:new_empty(shape):bernoulli_(keep_prob)
    if keep_prob > 0.0 then
        random_tensor:div_(keep_prob)
    end
    local output = x * random_tensor
    return output
end
local DropPath = nn.Module:extend("DropPath")
function DropPath:init(drop_prob)
    self.drop_prob = drop_prob
end
function DropPath:forward(x)
    return drop_path(x, self.drop_prob, self.training)
end

-- layers/patch_embed.py
local function make_2tuple(x)
    -- if isinstance(x, tuple): assert len(x) == 2; return x
    if type(x) == "table" then
        assert(#x == 2)
        return x
    end
    assert(math.type == nil or math.type(x) == "integer" or x == math.floor(x))
    return { x, x }
end
local PatchEmbed = nn.Module:extend("PatchEmbed")
nn.signature(PatchEmbed, "img_size: Union[int, Tuple[int, int]] = 224, " ..
    "patch_size: Union[int, Tuple[int, int]] = 16, in_chans: int = 3, embed_dim: int = 768, " ..
    "norm_layer: Optional[Callable] = None, flatten_embedding: bool = True")
function PatchEmbed:init(img_size, patch_size, in_chans, embed_dim, norm_layer, flatten_embedding)
    local image_HW = make_2tuple(img_size)
    local patch_HW = make_2tuple(patch_size)
    -- patch_grid_size = (image_HW[0] // patch_HW[0], image_HW[1] // patch_HW[1])
    local patch_grid_size = { math.floor(image_HW[1] / patch_HW[1]), math.floor(image_HW[2] / patch_HW[2]) }
    self.img_size = image_HW
    self.patch_size = patch_HW
    self.patches_resolution = patch_grid_size
    self.num_patches = patch_grid_size[1] * patch_grid_size[2]
    self.in_chans = in_chans
    self.embed_dim = embed_dim
    self.flatten_embedding = flatten_embedding
    -- self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_HW, stride=patch_HW)
    self.proj = nn.Conv2d(in_chans, embed_dim, { kernel_size = patch_HW, stride = patch_HW })
    -- self.norm = norm_layer(embed_dim) if norm_layer else nn.Identity()
    self.norm = norm_layer and norm_layer(embed_dim) or nn.Identity()
end
function PatchEmbed:forward(x)
    -- _, _, H, W = x.shape
    local _, _, H, W = unpack(x.shape)
    -- patch_H, patch_W = self.patch_size
    local patch_H, patch_W = unpack(self.patch_size)
    -- assert H % patch_H == 0, f"Input image height {H} is not a multiple of patch height {patch_H}"
    assert(H % patch_H == 0, string.format("Input image height %d is not a multiple of patch height %d",
        H, patch_H))
    assert(W % patch_W == 0, string.format("Input image width %d is not a multiple of patch width: %d",
        W, patch_W))
    x = self.proj(x) -- B C H W
    -- H, W = x.size(2), x.size(3)
    H, W = x:size(3), x:size(4)
    -- x = x.flatten(2).transpose(1, 2)  # B HW C
    x = x:flatten(3):transpose(2, 3)
    x = self.norm(x)
    if not self.flatten_embedding then
        x = x:reshape(-1, H, W, self.embed_dim) -- B H W C
    end
    return x
end
function PatchEmbed:flops()
    local Ho, Wo = unpack(self.patches_resolution)
    local flops = Ho * Wo * self.embed_dim * self.in_chans * (self.patch_size[1] * self.patch_size[2])
    if self.norm ~= nil then
        flops = flops + Ho * Wo * self.embed_dim
    end
    return flops
end

-- layers/attention.py
local Attention = nn.Module:extend("Attention")
nn.signature(Attention, "dim: int, num_heads: int = 8, qkv_bias: bool = False, proj_bias: bool = True, " ..
    "attn_drop: float = 0.0, proj_drop: float = 0.0")
function Attention:init(dim, num_heads, qkv_bias, proj_bias, attn_drop, proj_drop)
    self.dim = dim
    self.num_heads = num_heads
    local head_dim = math.floor(dim / num_heads)
    -- self.scale = head_dim**-0.5
    self.scale = head_dim ^ -0.5
    self.qkv = nn.Linear(dim, dim * 3, { bias = qkv_bias })
    self.attn_drop = attn_drop
    self.proj = nn.Linear(dim, dim, { bias = proj_bias })
    self.proj_drop = nn.Dropout(proj_drop)
end
function Attention:forward(x, is_causal)
    -- B, N, C = x.shape
    local B, N, C = unpack(x.shape)
    -- qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads)
    local qkv = self.qkv(x):reshape(B, N, 3, self.num_heads, math.floor(C / self.num_heads))
    -- q, k, v = torch.unbind(qkv, 2)
    local q, k, v = unpack(tide.unbind(qkv, 3))
    -- q, k, v = [t.transpose(1, 2) for t in [q, k, v]]
    q, k, v = q:transpose(2, 3), k:transpose(2, 3), v:transpose(2, 3)
    -- x = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=self.attn_drop if self.training else 0, is_causal=is_causal)
    x = F.scaled_dot_product_attention(q, k, v, { attn_mask = nil,
        dropout_p = self.training and self.attn_drop or 0, is_causal = is_causal or false })
    -- x = x.transpose(1, 2).contiguous().view(B, N, C)
    x = x:transpose(2, 3):contiguous():view(B, N, C)
    x = self.proj_drop(self.proj(x))
    return x
end
-- class MemEffAttention(Attention): (the not XFORMERS_AVAILABLE path)
local MemEffAttention = Attention:extend("MemEffAttention")
function MemEffAttention:forward(x, attn_bias)
    if attn_bias ~= nil then
        error("xFormers is required for using nested tensors")
    end
    -- return super().forward(x)
    return Attention.forward(self, x)
end

-- layers/block.py
-- def drop_add_residual_stochastic_depth(x, residual_func, sample_drop_ratio=0.0):
local function drop_add_residual_stochastic_depth(x, residual_func, sample_drop_ratio)
    -- b, n, d = x.shape
    local b = x.shape[1]
    -- sample_subset_size = max(int(b * (1 - sample_drop_ratio)), 1)
    local sample_subset_size = math.max(math.floor(b * (1 - sample_drop_ratio)), 1)
    -- brange = (torch.randperm(b, device=x.device))[:sample_subset_size]
    local brange = (tide.randperm(b, { device = x.device }))[{ { 1, sample_subset_size } }]
    -- x_subset = x[brange]
    local x_subset = x[brange]
    local residual = residual_func(x_subset)
    -- x_flat = x.flatten(1)
    local x_flat = x:flatten(2)
    residual = residual:flatten(2)
    local residual_scale_factor = b / sample_subset_size
    -- x_plus_residual = torch.index_add(x_flat, 0, brange, residual.to(dtype=x.dtype), alpha=residual_scale_factor)
    local x_plus_residual = tide.index_add(x_flat, 1, brange, residual:to({ dtype = x.dtype }),
        { alpha = residual_scale_factor })
    return x_plus_residual:view_as(x)
end

local Block = nn.Module:extend("Block")
nn.signature(Block, "dim: int, num_heads: int, mlp_ratio: float = 4.0, qkv_bias: bool = False, " ..
    "proj_bias: bool = True, ffn_bias: bool = True, drop: float = 0.0, attn_drop: float = 0.0, " ..
    "init_values=None, drop_path: float = 0.0, act_layer = nn.GELU, norm_layer = nn.LayerNorm, " ..
    "attn_class = Attention, ffn_layer = Mlp")
function Block:init(dim, num_heads, mlp_ratio, qkv_bias, proj_bias, ffn_bias, drop, attn_drop, init_values,
                    drop_path_, act_layer, norm_layer, attn_class, ffn_layer)
    act_layer, norm_layer = act_layer or nn.GELU, norm_layer or nn.LayerNorm
    attn_class, ffn_layer = attn_class or Attention, ffn_layer or Mlp
    self.norm1 = norm_layer(dim)
    self.attn = attn_class(dim, { num_heads = num_heads, qkv_bias = qkv_bias, proj_bias = proj_bias,
        attn_drop = attn_drop, proj_drop = drop })
    -- self.ls1 = LayerScale(dim, init_values=init_values) if init_values else nn.Identity()
    self.ls1 = (init_values and init_values ~= 0) and LayerScale(dim, { init_values = init_values })
        or nn.Identity()
    -- self.drop_path1 = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()
    self.drop_path1 = drop_path_ > 0.0 and DropPath(drop_path_) or nn.Identity()

    self.norm2 = norm_layer(dim)
    local mlp_hidden_dim = math.floor(dim * mlp_ratio)
    self.mlp = ffn_layer({ in_features = dim, hidden_features = mlp_hidden_dim, act_layer = act_layer,
        drop = drop, bias = ffn_bias })
    self.ls2 = (init_values and init_values ~= 0) and LayerScale(dim, { init_values = init_values })
        or nn.Identity()
    self.drop_path2 = drop_path_ > 0.0 and DropPath(drop_path_) or nn.Identity()

    self.sample_drop_ratio = drop_path_
end
function Block:forward(x)
    local function attn_residual_func(x_)
        return self.ls1(self.attn(self.norm1(x_)))
    end
    local function ffn_residual_func(x_)
        return self.ls2(self.mlp(self.norm2(x_)))
    end
    if self.training and self.sample_drop_ratio > 0.1 then
        -- the overhead is compensated only for a drop path rate larger than 0.1
        x = drop_add_residual_stochastic_depth(x, attn_residual_func, self.sample_drop_ratio)
        x = drop_add_residual_stochastic_depth(x, ffn_residual_func, self.sample_drop_ratio)
    elseif self.training and self.sample_drop_ratio > 0.0 then
        x = x + self.drop_path1(attn_residual_func(x))
        x = x + self.drop_path1(ffn_residual_func(x)) -- FIXME: drop_path2
    else
        x = x + attn_residual_func(x)
        x = x + ffn_residual_func(x)
    end
    return x
end
-- class NestedTensorBlock(Block): forward(x_or_x_list) for a tensor is Block.forward
-- (forward_nested needs xFormers: AssertionError("xFormers is required for using nested tensors"))
local NestedTensorBlock = Block:extend("NestedTensorBlock")
function NestedTensorBlock:forward(x_or_x_list)
    if tide.is_tensor(x_or_x_list) then
        return Block.forward(self, x_or_x_list)
    end
    error("xFormers is required for using nested tensors")
end

-- layers/dino_head.py
local function _build_mlp(nlayers, in_dim, bottleneck_dim, hidden_dim, use_bn, bias)
    if bias == nil then bias = true end
    if nlayers == 1 then
        return nn.Linear(in_dim, bottleneck_dim, { bias = bias })
    else
        local layers = { nn.Linear(in_dim, hidden_dim, { bias = bias }) }
        if use_bn then
            layers[#layers + 1] = nn.BatchNorm1d(hidden_dim)
        end
        layers[#layers + 1] = nn.GELU()
        for _ = 1, nlayers - 2 do
            layers[#layers + 1] = nn.Linear(hidden_dim, hidden_dim, { bias = bias })
            if use_bn then
                layers[#layers + 1] = nn.BatchNorm1d(hidden_dim)
            end
            layers[#layers + 1] = nn.GELU()
        end
        layers[#layers + 1] = nn.Linear(hidden_dim, bottleneck_dim, { bias = bias })
        -- return nn.Sequential(*layers)
        return nn.Sequential(unpack(layers))
    end
end
local DINOHead = nn.Module:extend("DINOHead")
nn.signature(DINOHead, "in_dim, out_dim, use_bn=False, nlayers=3, hidden_dim=2048, bottleneck_dim=256, " ..
    "mlp_bias=True")
function DINOHead:init(in_dim, out_dim, use_bn, nlayers, hidden_dim, bottleneck_dim, mlp_bias)
    nlayers = math.max(nlayers, 1)
    -- self.mlp = _build_mlp(nlayers, in_dim, bottleneck_dim, hidden_dim=hidden_dim, use_bn=use_bn, bias=mlp_bias)
    self.mlp = _build_mlp(nlayers, in_dim, bottleneck_dim, hidden_dim, use_bn, mlp_bias)
    self:apply(function(m) self:_init_weights(m) end)
    -- self.last_layer = weight_norm(nn.Linear(bottleneck_dim, out_dim, bias=False))
    self.last_layer = nn.utils.weight_norm(nn.Linear(bottleneck_dim, out_dim, { bias = false }))
    self.last_layer.weight_g.data:fill_(1)
end
function DINOHead:_init_weights(m)
    if isinstance(m, nn.Linear) then
        -- trunc_normal_(m.weight, std=0.02)
        nn.init.trunc_normal_(m.weight, { std = 0.02 })
        if isinstance(m, nn.Linear) and m.bias ~= nil then
            nn.init.constant_(m.bias, 0)
        end
    end
end
function DINOHead:forward(x)
    x = self.mlp(x)
    -- eps = 1e-6 if x.dtype == torch.float16 else 1e-12
    local eps = x.dtype == tide.float16 and 1e-6 or 1e-12
    -- x = nn.functional.normalize(x, dim=-1, p=2, eps=eps)
    x = F.normalize(x, { dim = -1, p = 2, eps = eps })
    x = self.last_layer(x)
    return x
end

-- models/vision_transformer.py
-- def named_apply(fn, module, name="", depth_first=True, include_root=False):
local function named_apply(fn, module, name, depth_first, include_root)
    name = name or ""
    if depth_first == nil then depth_first = true end
    if not depth_first and include_root then
        fn(module, name)
    end
    -- for child_name, child_module in module.named_children():
    for _, nc in ipairs(module:named_children()) do
        local child_name, child_module = nc[1], nc[2]
        -- child_name = ".".join((name, child_name)) if name else child_name
        child_name = name ~= "" and (name .. "." .. child_name) or child_name
        named_apply(fn, child_module, child_name, depth_first, true)
    end
    if depth_first and include_root then
        fn(module, name)
    end
    return module
end

-- class BlockChunk(nn.ModuleList):
local BlockChunk = nn.ModuleList:extend("BlockChunk")
function BlockChunk:forward(x)
    -- for b in self:
    for _, b in ipairs(self) do
        x = b(x)
    end
    return x
end

-- def init_weights_vit_timm(module: nn.Module, name: str = ""):
local function init_weights_vit_timm(module, name) -- luacheck: ignore
    if isinstance(module, nn.Linear) then
        nn.init.trunc_normal_(module.weight, { std = 0.02 })
        if module.bias ~= nil then
            nn.init.zeros_(module.bias)
        end
    end
end

local DinoVisionTransformer = nn.Module:extend("DinoVisionTransformer")
nn.signature(DinoVisionTransformer, "img_size=224, patch_size=16, in_chans=3, embed_dim=768, depth=12, " ..
    "num_heads=12, mlp_ratio=4.0, qkv_bias=True, ffn_bias=True, proj_bias=True, drop_path_rate=0.0, " ..
    "drop_path_uniform=False, init_values=None, embed_layer=PatchEmbed, act_layer=nn.GELU, " ..
    "block_fn=Block, ffn_layer='mlp', block_chunks=1, num_register_tokens=0, " ..
    "interpolate_antialias=False, interpolate_offset=0.1")
function DinoVisionTransformer:init(img_size, patch_size, in_chans, embed_dim, depth, num_heads, mlp_ratio,
                                    qkv_bias, ffn_bias, proj_bias, drop_path_rate, drop_path_uniform,
                                    init_values, embed_layer, act_layer, block_fn, ffn_layer, block_chunks,
                                    num_register_tokens, interpolate_antialias, interpolate_offset)
    embed_layer, act_layer, block_fn = embed_layer or PatchEmbed, act_layer or nn.GELU, block_fn or Block
    -- norm_layer = partial(nn.LayerNorm, eps=1e-6)
    local norm_layer = partial(nn.LayerNorm, { eps = 1e-6 })

    -- self.num_features = self.embed_dim = embed_dim
    self.num_features, self.embed_dim = embed_dim, embed_dim
    self.num_tokens = 1
    self.n_blocks = depth
    self.num_heads = num_heads
    self.patch_size = patch_size
    self.num_register_tokens = num_register_tokens
    self.interpolate_antialias = interpolate_antialias
    self.interpolate_offset = interpolate_offset

    self.patch_embed = embed_layer({ img_size = img_size, patch_size = patch_size, in_chans = in_chans,
        embed_dim = embed_dim })
    local num_patches = self.patch_embed.num_patches

    self.cls_token = nn.Parameter(tide.zeros(1, 1, embed_dim))
    self.pos_embed = nn.Parameter(tide.zeros(1, num_patches + self.num_tokens, embed_dim))
    assert(num_register_tokens >= 0)
    -- self.register_tokens = (nn.Parameter(torch.zeros(1, num_register_tokens, embed_dim)) if num_register_tokens else None)
    self.register_tokens = num_register_tokens ~= 0 and nn.Parameter(tide.zeros(1, num_register_tokens,
        embed_dim)) or nil

    local dpr
    if drop_path_uniform == true then
        -- dpr = [drop_path_rate] * depth
        dpr = {}
        for i = 1, depth do dpr[i] = drop_path_rate end
    else
        -- dpr = np.linspace(0, drop_path_rate, depth).tolist()  # stochastic depth decay rule
        dpr = tide.linspace(0, drop_path_rate, depth, { dtype = "float64" }):tolist()
    end

    if ffn_layer == "mlp" then
        ffn_layer = Mlp
    elseif ffn_layer == "swiglufused" or ffn_layer == "swiglu" then
        ffn_layer = SwiGLUFFNFused
    elseif ffn_layer == "identity" then
        ffn_layer = function() return nn.Identity() end
    else
        error("NotImplementedError")
    end

    -- blocks_list = [block_fn(dim=embed_dim, ..., init_values=init_values) for i in range(depth)]
    local blocks_list = {}
    for i = 1, depth do
        blocks_list[i] = block_fn({ dim = embed_dim, num_heads = num_heads, mlp_ratio = mlp_ratio,
            qkv_bias = qkv_bias, proj_bias = proj_bias, ffn_bias = ffn_bias, drop_path = dpr[i],
            norm_layer = norm_layer, act_layer = act_layer, ffn_layer = ffn_layer, init_values = init_values })
    end
    if block_chunks > 0 then
        self.chunked_blocks = true
        local chunked_blocks = {}
        local chunksize = math.floor(depth / block_chunks)
        -- for i in range(0, depth, chunksize):
        for i = 0, depth - 1, chunksize do
            -- this is to keep the block index consistent if we chunk the block list
            -- chunked_blocks.append([nn.Identity()] * i + blocks_list[i : i + chunksize])
            local chunk = {}
            for _ = 1, i do chunk[#chunk + 1] = nn.Identity() end
            for j = i + 1, math.min(i + chunksize, depth) do chunk[#chunk + 1] = blocks_list[j] end
            chunked_blocks[#chunked_blocks + 1] = chunk
        end
        -- self.blocks = nn.ModuleList([BlockChunk(p) for p in chunked_blocks])
        local bcs = {}
        for k, p in ipairs(chunked_blocks) do bcs[k] = BlockChunk(p) end
        self.blocks = nn.ModuleList(bcs)
    else
        self.chunked_blocks = false
        self.blocks = nn.ModuleList(blocks_list)
    end

    self.norm = norm_layer(embed_dim)
    self.head = nn.Identity()

    self.mask_token = nn.Parameter(tide.zeros(1, embed_dim))

    self:init_weights()
end
function DinoVisionTransformer:init_weights()
    -- trunc_normal_(self.pos_embed, std=0.02)
    nn.init.trunc_normal_(self.pos_embed, { std = 0.02 })
    -- nn.init.normal_(self.cls_token, std=1e-6)
    nn.init.normal_(self.cls_token, { std = 1e-6 })
    if self.register_tokens ~= nil then
        nn.init.normal_(self.register_tokens, { std = 1e-6 })
    end
    named_apply(init_weights_vit_timm, self)
end
function DinoVisionTransformer:interpolate_pos_encoding(x, w, h)
    local previous_dtype = x.dtype
    local npatch = x.shape[2] - 1
    local N = self.pos_embed.shape[2] - 1
    if npatch == N and w == h then
        return self.pos_embed
    end
    local pos_embed = self.pos_embed:float()
    -- class_pos_embed = pos_embed[:, 0]
    local class_pos_embed = pos_embed[{ {}, 1 }]
    -- patch_pos_embed = pos_embed[:, 1:]
    local patch_pos_embed = pos_embed[{ {}, { 2, -1 } }]
    local dim = x.shape[-1]
    -- w0 = w // self.patch_size
    local w0 = math.floor(w / self.patch_size)
    local h0 = math.floor(h / self.patch_size)
    -- M = int(math.sqrt(N))  # Recover the number of patches in each dimension
    local M = math.floor(math.sqrt(N))
    assert(N == M * M)
    local kwargs = {}
    if self.interpolate_offset and self.interpolate_offset ~= 0 then
        -- Historical kludge: add a small number to avoid floating point error in the interpolation, see https://github.com/facebookresearch/dino/issues/8
        -- sx = float(w0 + self.interpolate_offset) / M
        local sx = (w0 + self.interpolate_offset) / M
        local sy = (h0 + self.interpolate_offset) / M
        -- kwargs["scale_factor"] = (sx, sy)
        kwargs["scale_factor"] = { sx, sy }
    else
        -- Simply specify an output size instead of a scale factor
        kwargs["size"] = { w0, h0 }
    end
    -- patch_pos_embed = nn.functional.interpolate(patch_pos_embed.reshape(1, M, M, dim).permute(0, 3, 1, 2), mode="bicubic", antialias=self.interpolate_antialias, **kwargs)
    kwargs.mode, kwargs.antialias = "bicubic", self.interpolate_antialias
    patch_pos_embed = F.interpolate(patch_pos_embed:reshape(1, M, M, dim):permute(1, 4, 2, 3), kwargs)
    -- assert (w0, h0) == patch_pos_embed.shape[-2:]
    assert(w0 == patch_pos_embed.shape[-2] and h0 == patch_pos_embed.shape[-1])
    -- patch_pos_embed = patch_pos_embed.permute(0, 2, 3, 1).view(1, -1, dim)
    patch_pos_embed = patch_pos_embed:permute(1, 3, 4, 2):view(1, -1, dim)
    -- return torch.cat((class_pos_embed.unsqueeze(0), patch_pos_embed), dim=1).to(previous_dtype)
    return tide.cat({ class_pos_embed:unsqueeze(1), patch_pos_embed }, { dim = 2 }):to(previous_dtype)
end
function DinoVisionTransformer:prepare_tokens_with_masks(x, masks)
    -- B, nc, w, h = x.shape
    local _, _, w, h = unpack(x.shape)
    x = self.patch_embed(x)
    if masks ~= nil then
        -- x = torch.where(masks.unsqueeze(-1), self.mask_token.to(x.dtype).unsqueeze(0), x)
        x = tide.where(masks:unsqueeze(-1), self.mask_token:to(x.dtype):unsqueeze(1), x)
    end
    -- x = torch.cat((self.cls_token.expand(x.shape[0], -1, -1), x), dim=1)
    x = tide.cat({ self.cls_token:expand(x.shape[1], -1, -1), x }, { dim = 2 })
    x = x + self:interpolate_pos_encoding(x, w, h)

    if self.register_tokens ~= nil then
        -- x = torch.cat((x[:, :1], self.register_tokens.expand(x.shape[0], -1, -1), x[:, 1:]), dim=1)
        x = tide.cat({ x[{ {}, { 1, 1 } }], self.register_tokens:expand(x.shape[1], -1, -1),
            x[{ {}, { 2, -1 } }] }, { dim = 2 })
    end
    return x
end
-- (forward_features_list needs xFormers' nested blocks; not ported)
function DinoVisionTransformer:forward_features(x, masks)
    x = self:prepare_tokens_with_masks(x, masks)
    for _, blk in ipairs(self.blocks) do
        x = blk(x)
    end
    local x_norm = self.norm(x)
    return {
        -- "x_norm_clstoken": x_norm[:, 0],
        x_norm_clstoken = x_norm[{ {}, 1 }],
        -- "x_norm_regtokens": x_norm[:, 1 : self.num_register_tokens + 1],
        x_norm_regtokens = x_norm[{ {}, { 2, self.num_register_tokens + 1 } }],
        -- "x_norm_patchtokens": x_norm[:, self.num_register_tokens + 1 :],
        x_norm_patchtokens = x_norm[{ {}, { self.num_register_tokens + 2, -1 } }],
        x_prenorm = x,
        masks = masks,
    }
end
-- blocks_to_take = range(total_block_len - n, total_block_len) if isinstance(n, int) else n
local function blocks_to_take_of(n, total_block_len)
    local take = {}
    if type(n) == "number" then
        for i = total_block_len - n, total_block_len - 1 do take[#take + 1] = i end
    else
        take = n
    end
    local set = {}
    for _, i in ipairs(take) do set[i] = true end
    return take, set
end
function DinoVisionTransformer:_get_intermediate_layers_not_chunked(x, n)
    -- If n is an int, take the n last blocks. If it's a list, take them
    x = self:prepare_tokens_with_masks(x)
    local output, total_block_len = {}, #self.blocks
    local blocks_to_take, take = blocks_to_take_of(n, total_block_len)
    -- for i, blk in enumerate(self.blocks):
    for i, blk in ipairs(self.blocks) do
        x = blk(x)
        if take[i - 1] then
            output[#output + 1] = x
        end
    end
    assert(#output == #blocks_to_take, string.format("only %d / %d blocks found", #output, #blocks_to_take))
    return output
end
function DinoVisionTransformer:_get_intermediate_layers_chunked(x, n)
    x = self:prepare_tokens_with_masks(x)
    -- output, i, total_block_len = [], 0, len(self.blocks[-1])
    local output, i, total_block_len = {}, 0, #self.blocks[-1]
    local blocks_to_take, take = blocks_to_take_of(n, total_block_len)
    for _, block_chunk in ipairs(self.blocks) do
        -- for blk in block_chunk[i:]:  # Passing the nn.Identity()
        for _, blk in ipairs(block_chunk[{ { i + 1, -1 } }]) do
            x = blk(x)
            if take[i] then
                output[#output + 1] = x
            end
            i = i + 1
        end
    end
    assert(#output == #blocks_to_take, string.format("only %d / %d blocks found", #output, #blocks_to_take))
    return output
end
function DinoVisionTransformer:get_intermediate_layers(x, n, reshape, return_class_token, norm)
    local outputs
    if self.chunked_blocks then
        outputs = self:_get_intermediate_layers_chunked(x, n)
    else
        outputs = self:_get_intermediate_layers_not_chunked(x, n)
    end
    if norm then
        -- outputs = [self.norm(out) for out in outputs]
        for k, out in ipairs(outputs) do outputs[k] = self.norm(out) end
    end
    -- class_tokens = [out[:, 0] for out in outputs]
    local class_tokens = {}
    for k, out in ipairs(outputs) do class_tokens[k] = out[{ {}, 1 }] end
    -- outputs = [out[:, 1 + self.num_register_tokens :] for out in outputs]
    for k, out in ipairs(outputs) do outputs[k] = out[{ {}, { 2 + self.num_register_tokens, -1 } }] end
    if reshape then
        -- B, _, w, h = x.shape
        local B, _, w, h = unpack(x.shape)
        -- outputs = [out.reshape(B, w // self.patch_size, h // self.patch_size, -1).permute(0, 3, 1, 2).contiguous() for out in outputs]
        for k, out in ipairs(outputs) do
            outputs[k] = out:reshape(B, math.floor(w / self.patch_size), math.floor(h / self.patch_size), -1)
                :permute(1, 4, 2, 3):contiguous()
        end
    end
    if return_class_token then
        -- return tuple(zip(outputs, class_tokens))
        local z = {}
        for k = 1, #outputs do z[k] = { outputs[k], class_tokens[k] } end
        return z
    end
    return outputs
end
nn.signature(DinoVisionTransformer, "x, n=1, reshape=False, return_class_token=False, norm=True",
    "get_intermediate_layers")
-- def forward(self, *args, is_training=False, **kwargs):
function DinoVisionTransformer:forward(x, kw)
    kw = kw or {}
    local ret = self:forward_features(x, kw.masks)
    if kw.is_training then
        return ret
    else
        return self.head(ret["x_norm_clstoken"])
    end
end

describe("facebookresearch/dinov2 layers and DinoVisionTransformer", function()
    it("Mlp, SwiGLUFFNFused, LayerScale, DropPath, NestedTensorBlock and DINOHead match PyTorch", function()
        -- det(Mlp(6, 10))(inp(2, 3, 6))
        check(det(Mlp(6, 10))(inp(2, 3, 6)), -8.701962, { -0.2378964, 0.1482033, -0.2553677, -0.3168267 },
            -0.82751)
        -- SwiGLUFFNFused(6, 12): hidden (int(12 * 2 / 3) + 7) // 8 * 8 == 8
        local sw = det(SwiGLUFFNFused(6, 12))
        assert.are.equal(8, sw.w3.in_features)
        check(sw(inp(2, 3, 6)), -6.199743, { 0.0444351, -0.06643297, -0.174038, -0.2387764 }, -0.07716949)
        -- NestedTensorBlock(8, 2, mlp_ratio=2, qkv_bias=True, init_values=0.5, attn_class=MemEffAttention).eval()
        local blk = det(NestedTensorBlock(8, 2, { mlp_ratio = 2, qkv_bias = true, init_values = 0.5,
            attn_class = MemEffAttention })):eval()
        check(blk(inp(2, 5, 8)), 6.770842, { -0.1209198, 0.09628968, 0.1442213, 0.2952062 }, -0.7384536)
        assert.has_error(function() blk.attn(inp(1, 2, 8), "bias") end,
            "xFormers is required for using nested tensors")

        local ls = LayerScale(4, { init_values = 0.5, inplace = true })
        local y = tide.ones(2, 4)
        ls(y)
        assert.are.same({ 0.5, 0.5, 0.5, 0.5 }, y[1]:tolist())

        -- DropPath: eval is identity; training zeroes whole samples and scales the kept ones by 1/keep
        tide.manual_seed(1)
        local dp = DropPath(0.5)
        local x = tide.ones(64, 3, 2)
        assert.are.equal(x, dp:eval()(x))
        local d = dp:train()(x)
        for i = 1, 64 do
            local s = d[i]:unique():tolist()
            assert.is_true(#s == 1 and (s[1] == 0 or s[1] == 2))
        end

        -- DINOHead(8, 5, nlayers=3, hidden_dim=12, bottleneck_dim=6), last_layer.weight_g filled with 1
        local h = det(DINOHead(8, 5, { nlayers = 3, hidden_dim = 12, bottleneck_dim = 6 }))
        h.last_layer.weight_g.data:fill_(1)
        local names = {}
        for _, np in ipairs(h:named_parameters()) do names[#names + 1] = np[1] end
        table.sort(names)
        -- (PyTorch's mlp.0/mlp.2/mlp.4: tide's Sequential names its children from 1)
        assert.are.same({ "last_layer.weight_g", "last_layer.weight_v", "mlp.1.bias", "mlp.1.weight",
            "mlp.3.bias", "mlp.3.weight", "mlp.5.bias", "mlp.5.weight" }, names)
        check(h(inp(2, 8)), -1.365457, { 0.02595748, -0.630343, 0.7531927, -0.3696291 }, -0.4284)
    end)

    it("drop_add_residual_stochastic_depth: the kept samples get residual * b / subset, the rest pass", function()
        tide.manual_seed(2)
        local x = tide.randn(4, 3, 2)
        local out = drop_add_residual_stochastic_depth(x, function(s) return tide.ones_like(s) end, 0.5)
        local changed = 0
        for i = 1, 4 do
            local diff = (out[i] - x[i]):abs():max():item()
            if diff > 1e-6 then
                changed = changed + 1
                assert.is_true(tide.allclose(out[i], x[i] + 2))
            end
        end
        assert.are.equal(2, changed)
    end)

    it("class BlockChunk(nn.ModuleList): ModuleList:extend(name) on a class subclasses; slices keep the class",
        function()
            -- (was: "ModuleList:extend: expected a list of modules, got string")
            local chunk = BlockChunk({ nn.Identity(), nn.Linear(2, 2) })
            assert.are.equal(2, #chunk)
            local x = tide.randn(3, 2)
            assert.is_true(tide.equal(chunk(x), chunk[2](x)))
            -- block_chunk[i:] is a BlockChunk, as PyTorch's self.__class__(...)
            local tail = chunk[{ { 2, -1 } }]
            assert.are.equal(BlockChunk, getmetatable(tail))
            assert.is_true(tide.equal(tail(x), chunk[2](x)))
            -- an instance's extend still appends, and a name there is refused, the list unchanged
            chunk:extend({ nn.Identity() })
            assert.are.equal(3, #chunk)
            assert.has_error(function() chunk:extend("BlockChunk2") end,
                "tide: ModuleList:extend: expected a list of modules, got string")
            assert.are.equal(3, #chunk)
            -- the same for ParameterList and a Sequential subclass's slices
            local PL = nn.ParameterList:extend("MyParams")
            assert.are.equal(PL, getmetatable(PL({ tide.zeros(2) })))
            local Seq = nn.Sequential:extend("MySeq")
            assert.are.equal(Seq, getmetatable(Seq(nn.Identity(), nn.ReLU())[{ { 2, -1 } }]))
        end)

    it("ModuleList + ModuleList, Sequential + Sequential, Sequential * n (PyTorch 1.13's operators)", function()
        -- blocks = nn.ModuleList(blocks_list[:1]) + nn.ModuleList(blocks_list[1:])  (was: arithmetic on a ModuleList)
        local r, t = nn.ReLU(), nn.Tanh()
        local ml = nn.ModuleList({ r }) + nn.ModuleList({ t })
        assert.are.equal(2, #ml)
        assert.are.equal(t, ml[2])
        assert.are.equal(3, #(nn.ModuleList({ r }) + { t, r }))
        -- nn.Sequential(a) + nn.Sequential(b)
        local s = nn.Sequential(r) + nn.Sequential(t)
        assert.are.equal(2, #s)
        assert.are.same({ 0.0 }, s(tide.tensor({ -1.0 })):tolist())
        -- nn.Sequential(lin) * 3: the same module three times
        local s3 = nn.Sequential(nn.Linear(2, 2)) * 3
        assert.are.equal(3, #s3)
        assert.are.equal(s3[1], s3[3])
        assert.are.equal(2, #s3:parameters())
        assert.are.equal(2, #(2 * nn.Sequential(r)))
        -- bad operands raise as PyTorch's, naming the value
        assert.has_error(function() return nn.Sequential(r) + nn.ModuleList({ t }) end,
            "tide: Sequential +: add operator supports only objects of Sequential class, but a ModuleList is given")
        assert.has_error(function() return nn.Sequential(r) * 0 end,
            "tide: Sequential *: Non-positive multiplication factor 0 for Sequential")
        assert.has_error(function() return nn.ModuleList({ r }) + 3 end,
            "tide: ModuleList +: the right operand is a number, expected a ModuleList or a list of modules")
        -- subclasses keep the operators
        local Chunk = nn.ModuleList:extend("Chunk55")
        assert.are.equal(2, #(Chunk({ r }) + Chunk({ t })))
    end)

    local masks = tide.tensor({ { true, false, false, true, false, false, false, false, false },
        { false, false, false, false, false, false, false, false, false } })
    local cases = {
        { chunks = 1, aa = false, ffn = "mlp", pos = { -0.6939653, -0.2560128 },
            cls = { 0.9372293, { -0.1279585, -0.1600756, -0.1668408, -0.154541 }, 0.226391 },
            reg = { 1.296339, { -0.3090529, -0.2668644, -0.1345219, -0.007626921 }, 0.2302398 },
            patch = { 23.48211, { -0.4148088, -0.2953548, -0.05163749, 0.1509229 }, 0.237155 },
            prenorm = { -29.11243, { -0.5397917, -0.672634, -0.7451515, -0.8075793 }, 4.959606 },
            inter0 = { 24.74291, { -0.3021831, -0.2365268, -0.1419789, -0.307798 }, 0.2372203 },
            cls1 = { 0.9372484, { -0.1262901, -0.1628345, -0.1637494, -0.1576804 }, 0.226391 } },
        { chunks = 0, aa = true, ffn = "swiglufused", pos = { -0.6870463, -0.2464637 },
            cls = { 0.9363683, { -0.1262129, -0.1461246, -0.1480874, -0.1552737 }, 0.2257622 },
            reg = { 1.380192, { -0.3393767, -0.2692923, -0.1017366, 0.0233037 }, 0.2303082 },
            patch = { 23.71152, { -0.445752, -0.2837762, 0.003703639, 0.2006702 }, 0.2372698 },
            prenorm = { -22.45924, { -0.5616484, -0.6737493, -0.7388744, -0.8110422 }, 4.96834 },
            inter0 = { 24.83945, { -0.303602, -0.2386375, -0.14395, -0.3089485 }, 0.2373488 },
            cls1 = { 0.9363867, { -0.1243976, -0.1490706, -0.1447791, -0.1586534 }, 0.2257622 } },
    }
    for _, c in ipairs(cases) do
        it("DinoVisionTransformer (block_chunks=" .. c.chunks .. ", interpolate_antialias=" .. tostring(c.aa) ..
            ", ffn_layer=" .. c.ffn .. ") matches PyTorch and trains", function()
            tide.manual_seed(0)
            -- DinoVisionTransformer(img_size=8, patch_size=4, in_chans=3, embed_dim=8, depth=2, num_heads=2, mlp_ratio=2,
            --     init_values=0.5, block_fn=partial(Block, attn_class=MemEffAttention), ffn_layer=..., block_chunks=...,
            --     num_register_tokens=1, interpolate_antialias=...)
            local m = DinoVisionTransformer({ img_size = 8, patch_size = 4, in_chans = 3, embed_dim = 8, depth = 2,
                num_heads = 2, mlp_ratio = 2, init_values = 0.5,
                block_fn = partial(NestedTensorBlock, { attn_class = MemEffAttention }), ffn_layer = c.ffn,
                block_chunks = c.chunks, num_register_tokens = 1, interpolate_antialias = c.aa })
            det(m):eval()
            local x = inp(2, 3, 12, 12)
            -- m.interpolate_pos_encoding(m.patch_embed(x), 12, 12): 2x2 grid -> scale_factor 1.55, bicubic
            local pos = m:interpolate_pos_encoding(m.patch_embed(x), 12, 12)
            assert.are.same({ 1, 10, 8 }, pos.shape)
            check(pos, c.pos[1], { -0.1284548, -0.2177984, -0.2776647, -0.2999497 }, c.pos[2])
            -- f = m.forward_features(x, masks=masks)
            local f = m:forward_features(x, masks)
            check(f["x_norm_clstoken"], unpack(c.cls))
            check(f["x_norm_regtokens"], unpack(c.reg))
            check(f["x_norm_patchtokens"], unpack(c.patch))
            check(f["x_prenorm"], unpack(c.prenorm))
            -- outs = m.get_intermediate_layers(x, n=2, reshape=True, return_class_token=True)
            local outs = m:get_intermediate_layers(x, { n = 2, reshape = true, return_class_token = true })
            assert.are.equal(2, #outs)
            assert.are.same({ 2, 8, 3, 3 }, outs[1][1].shape)
            check(outs[1][1], unpack(c.inter0))
            check(outs[2][2], unpack(c.cls1))
            -- get_intermediate_layers(x, n=[0]) takes block 0 only
            assert.are.equal(1, #m:get_intermediate_layers(x, { n = { 0 } }))
            check(m(x), unpack(c.cls1))

            -- a DINO-style step: student head on the class token, drop_path_rate > 0.1 takes
            -- drop_add_residual_stochastic_depth
            tide.manual_seed(4)
            local student = DinoVisionTransformer({ img_size = 8, patch_size = 4, in_chans = 3, embed_dim = 8,
                depth = 2, num_heads = 2, mlp_ratio = 2, init_values = 0.5, drop_path_rate = 0.5,
                drop_path_uniform = true, ffn_layer = c.ffn, block_chunks = c.chunks })
            local head = DINOHead(8, 5, { nlayers = 2, hidden_dim = 12, bottleneck_dim = 6 })
            local params = student:parameters()
            for _, p in ipairs(head:parameters()) do params[#params + 1] = p end
            local opt = optim.AdamW(params, { lr = 1e-2 })
            local imgs = tide.randn(4, 3, 8, 8)
            local target = F.softmax(tide.randn(4, 5), { dim = -1 })
            local first, loss
            for step = 1, 6 do
                -- eval for the loss we compare, train (stochastic depth) for the update
                student:train(step > 1)
                local out = head(student(imgs, { is_training = true })["x_norm_clstoken"])
                loss = -(target * F.log_softmax(out, { dim = -1 })):sum({ dim = -1 }):mean()
                opt:zero_grad()
                loss:backward()
                opt:step()
                first = first or loss:item()
            end
            student:eval()
            loss = -(target * F.log_softmax(head(student(imgs)), { dim = -1 })):sum({ dim = -1 }):mean()
            assert_finite(loss)
            assert.is_true(loss:item() < first)
        end)
    end
end)
