-- ported_scripts178_spec.lua — facebookresearch/ijepa: src/masks/utils.py (apply_masks),
-- src/masks/multiblock.py (MaskCollator: _sample_block_size, _sample_block_mask with the
-- acceptable regions and the min_keep loop, the collated masks cut to the shortest),
-- src/utils/tensors.py (repeat_interleave_batch, trunc_normal_ through nn.init),
-- src/models/vision_transformer.py (get_2d_sincos_pos_embed, PatchEmbed, the masked ViT encoder,
-- VisionTransformerPredictor with its mask token) and src/train.py's step (smooth_l1 against the
-- target encoder's layer-normed features, AdamW, the EMA of the target encoder), ported line for
-- line at tiny sizes (32 x 32 images, patch 4: an 8 x 8 grid; embed 16, predictor 8, depth 1,
-- heads 2, batch 2). The Python line stands above each Lua line that differs from it.
-- The seeded draws are replaced by fixed values on both sides: _sample_block_size's
-- torch.rand(1, generator=g) reads RAND, _sample_block_mask's torch.randint top / left read DRAWS.
-- Mask indices are 1-based here (PyTorch's + 1). The ijepa HEAD predictor has no argsort step.
-- Weights come from a formula (fill) on both sides; the values are PyTorch 1.13's.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

local RAND = { 0.3, 0.5 }
local DRAWS = { 1, 2, 4, 0, 0, 0, 2, 3, 0, 4, 0, 0 }

-- def apply_masks(x, masks):
local function apply_masks(x, masks)
    local all_x = {}
    for _, m in ipairs(masks) do
        -- mask_keep = m.unsqueeze(-1).repeat(1, 1, x.size(-1))
        -- (`repeat` is a Lua keyword: tide spells it tile)
        local mask_keep = m:unsqueeze(-1):tile(1, 1, x:size(-1))
        -- all_x += [torch.gather(x, dim=1, index=mask_keep)]
        all_x[#all_x + 1] = tide.gather(x, 2, mask_keep)
    end
    -- return torch.cat(all_x, dim=0)
    return tide.cat(all_x, 1)
end

-- def repeat_interleave_batch(x, B, repeat):
local function repeat_interleave_batch(x, B, rep)
    -- N = len(x) // B
    local N = math.floor(#x / B)
    local outer = {}
    for i = 0, N - 1 do
        local inner = {}
        for _ = 1, rep do
            -- x[i*B:(i+1)*B]
            inner[#inner + 1] = x:narrow(1, i * B + 1, B)
        end
        outer[#outer + 1] = tide.cat(inner, 1)
    end
    return tide.cat(outer, 1)
end

-- class MaskCollator(object):
local MaskCollator = ported.class("MaskCollator")
function MaskCollator:__init__(o)
    -- self.height, self.width = input_size[0] // patch_size, input_size[1] // patch_size
    self.height = math.floor(o.input_size / o.patch_size)
    self.width = self.height
    self.enc_mask_scale, self.pred_mask_scale = o.enc_mask_scale, o.pred_mask_scale
    self.aspect_ratio, self.nenc, self.npred = o.aspect_ratio, o.nenc, o.npred
    self.min_keep, self.allow_overlap = o.min_keep, o.allow_overlap
    self.r, self.d = { unpack(RAND) }, { unpack(DRAWS) }
end

-- def _sample_block_size(self, generator, scale, aspect_ratio_scale):
function MaskCollator:_sample_block_size(scale, aspect_ratio_scale)
    -- _rand = torch.rand(1, generator=generator).item()   (a fixed value here)
    local _rand = table.remove(self.r, 1)
    local min_s, max_s = scale[1], scale[2]
    local mask_scale = min_s + _rand * (max_s - min_s)
    -- max_keep = int(self.height * self.width * mask_scale)
    local max_keep = math.floor(self.height * self.width * mask_scale)
    local min_ar, max_ar = aspect_ratio_scale[1], aspect_ratio_scale[2]
    local aspect_ratio = min_ar + _rand * (max_ar - min_ar)
    -- h = int(round(math.sqrt(max_keep * aspect_ratio)))
    -- (Python rounds a .5 to even; no .5 occurs here)
    local h = math.floor(math.sqrt(max_keep * aspect_ratio) + 0.5)
    local w = math.floor(math.sqrt(max_keep / aspect_ratio) + 0.5)
    while h >= self.height do h = h - 1 end
    while w >= self.width do w = w - 1 end
    return { h, w }
end

-- def _sample_block_mask(self, b_size, acceptable_regions=None):
function MaskCollator:_sample_block_mask(b_size, acceptable_regions)
    local h, w = b_size[1], b_size[2]
    -- def constrain_mask(mask, tries=0):
    local function constrain_mask(mask, tries)
        -- N = max(int(len(acceptable_regions)-tries), 0)
        local N = math.max(#acceptable_regions - tries, 0)
        for k = 1, N do
            -- mask *= acceptable_regions[k]
            mask:mul_(acceptable_regions[k])
        end
    end
    local tries, timeout, og_timeout, valid_mask = 0, 20, 20, false
    local mask, top, left
    while not valid_mask do
        -- top = torch.randint(0, self.height - h, (1,))   (a fixed value here)
        top = table.remove(self.d, 1)
        left = table.remove(self.d, 1)
        -- mask = torch.zeros((self.height, self.width), dtype=torch.int32)
        mask = tide.zeros({ self.height, self.width }, { dtype = "int32" })
        -- mask[top:top+h, left:left+w] = 1
        mask:narrow(1, top + 1, h):narrow(2, left + 1, w):fill_(1)
        if acceptable_regions ~= nil then
            constrain_mask(mask, tries)
        end
        -- mask = torch.nonzero(mask.flatten())
        mask = tide.nonzero(mask:flatten())
        -- valid_mask = len(mask) > self.min_keep
        valid_mask = #mask > self.min_keep
        if not valid_mask then
            timeout = timeout - 1
            if timeout == 0 then
                tries = tries + 1
                timeout = og_timeout
            end
        end
    end
    mask = mask:squeeze()
    -- mask_complement = torch.ones((self.height, self.width), dtype=torch.int32)
    local mask_complement = tide.ones({ self.height, self.width }, { dtype = "int32" })
    mask_complement:narrow(1, top + 1, h):narrow(2, left + 1, w):fill_(0)
    return mask, mask_complement
end

-- def __call__(self, batch):   (B alone: the images are collated apart)
function MaskCollator:__call__(B)
    local p_size = self:_sample_block_size(self.pred_mask_scale, self.aspect_ratio)
    local e_size = self:_sample_block_size(self.enc_mask_scale, { 1, 1 })
    local collated_masks_pred, collated_masks_enc = {}, {}
    local min_keep_pred = self.height * self.width
    local min_keep_enc = self.height * self.width
    for _ = 1, B do
        local masks_p, masks_C = {}, {}
        for _ = 1, self.npred do
            local mask, mask_C = self:_sample_block_mask(p_size)
            masks_p[#masks_p + 1] = mask
            masks_C[#masks_C + 1] = mask_C
            min_keep_pred = math.min(min_keep_pred, #mask)
        end
        collated_masks_pred[#collated_masks_pred + 1] = masks_p
        local acceptable_regions = masks_C
        if self.allow_overlap then acceptable_regions = nil end
        local masks_e = {}
        for _ = 1, self.nenc do
            local mask = self:_sample_block_mask(e_size, acceptable_regions)
            masks_e[#masks_e + 1] = mask
            min_keep_enc = math.min(min_keep_enc, #mask)
        end
        collated_masks_enc[#collated_masks_enc + 1] = masks_e
    end
    -- [[cm[:min_keep] for cm in cm_list] for cm_list in ...] then default_collate:
    -- a list (one per mask) of [B, min_keep] tensors
    local function collate(lists, keep, n)
        local out = {}
        for j = 1, n do
            local rows = {}
            for b = 1, #lists do rows[b] = lists[b][j]:narrow(1, 1, keep) end
            out[j] = tide.stack(rows, 1)
        end
        return out
    end
    return collate(collated_masks_enc, min_keep_enc, self.nenc),
        collate(collated_masks_pred, min_keep_pred, self.npred)
end

-- def get_1d_sincos_pos_embed_from_grid(embed_dim, pos):   (numpy in float64 -> tide float64)
local function get_1d_sincos_pos_embed_from_grid(embed_dim, pos)
    -- omega = np.arange(embed_dim // 2, dtype=float)
    local omega = tide.arange(math.floor(embed_dim / 2), { dtype = "float64" })
    omega = omega / (embed_dim / 2)
    -- omega = 1. / 10000**omega
    omega = 1 / tide.pow(10000, omega)
    pos = pos:reshape(-1)
    -- out = np.einsum('m,d->md', pos, omega)
    local out = tide.einsum("m,d->md", pos, omega)
    return tide.cat({ out:sin(), out:cos() }, 2)
end

-- def get_2d_sincos_pos_embed(embed_dim, grid_size, cls_token=False):
local function get_2d_sincos_pos_embed(embed_dim, grid_size)
    local grid_h = tide.arange(grid_size, { dtype = "float64" })
    local grid_w = tide.arange(grid_size, { dtype = "float64" })
    -- grid = np.meshgrid(grid_w, grid_h)  # here w goes first   (numpy's "xy" indexing)
    local grid = tide.meshgrid(grid_w, grid_h, { indexing = "xy" })
    grid = tide.stack(grid, 1)
    grid = grid:reshape(2, 1, grid_size, grid_size)
    local emb_h = get_1d_sincos_pos_embed_from_grid(math.floor(embed_dim / 2), grid[1])
    local emb_w = get_1d_sincos_pos_embed_from_grid(math.floor(embed_dim / 2), grid[2])
    return tide.cat({ emb_h, emb_w }, 2)
end

local MLP = nn.Module:extend("MLP")
function MLP:init(in_features, hidden_features)
    self.fc1 = nn.Linear(in_features, hidden_features)
    self.act = nn.GELU()
    self.fc2 = nn.Linear(hidden_features, in_features)
end
function MLP:forward(x)
    return self.fc2(self.act(self.fc1(x)))
end

local Attention = nn.Module:extend("Attention")
function Attention:init(dim, num_heads)
    self.num_heads = num_heads
    self.scale = math.floor(dim / num_heads) ^ -0.5
    self.qkv = nn.Linear(dim, dim * 3, true)
    self.proj = nn.Linear(dim, dim)
end
function Attention:forward(x)
    local B, N, C = x:size(1), x:size(2), x:size(3)
    -- .reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
    local qkv = self.qkv(x):reshape(B, N, 3, self.num_heads, math.floor(C / self.num_heads))
        :permute(3, 1, 4, 2, 5)
    local q, k, v = qkv[1], qkv[2], qkv[3]
    -- attn = (q @ k.transpose(-2, -1)) * self.scale
    local attn = q:matmul(k:transpose(-2, -1)) * self.scale
    attn = attn:softmax(-1)
    -- x = (attn @ v).transpose(1, 2).reshape(B, N, C)
    x = attn:matmul(v):transpose(2, 3):reshape(B, N, C)
    return self.proj(x), attn
end

local Block = nn.Module:extend("Block")
function Block:init(dim, num_heads)
    -- norm_layer=partial(nn.LayerNorm, eps=1e-6)
    self.norm1 = nn.LayerNorm(dim, { eps = 1e-6 })
    self.attn = Attention(dim, num_heads)
    self.norm2 = nn.LayerNorm(dim, { eps = 1e-6 })
    self.mlp = MLP(dim, dim * 4)
end
function Block:forward(x)
    local y = self.attn(self.norm1(x))
    x = x + y
    return x + self.mlp(self.norm2(x))
end

local PatchEmbed = nn.Module:extend("PatchEmbed")
function PatchEmbed:init(img_size, patch_size, in_chans, embed_dim)
    self.num_patches = math.floor(img_size / patch_size) * math.floor(img_size / patch_size)
    self.proj = nn.Conv2d(in_chans, embed_dim, { kernel_size = patch_size, stride = patch_size })
end
function PatchEmbed:forward(x)
    -- x = self.proj(x).flatten(2).transpose(1, 2)
    return self.proj(x):flatten(3):transpose(2, 3)
end

local VisionTransformer = nn.Module:extend("VisionTransformer")
function VisionTransformer:init(img_size, patch_size, in_chans, embed_dim, depth, num_heads)
    self.patch_embed = PatchEmbed(img_size, patch_size, in_chans, embed_dim)
    local num_patches = self.patch_embed.num_patches
    -- self.pos_embed = nn.Parameter(torch.zeros(1, num_patches, embed_dim), requires_grad=False)
    self.pos_embed = nn.Parameter(tide.zeros(1, num_patches, embed_dim), false)
    local pos_embed = get_2d_sincos_pos_embed(embed_dim, math.floor(num_patches ^ 0.5))
    -- self.pos_embed.data.copy_(torch.from_numpy(pos_embed).float().unsqueeze(0))
    tide.no_grad(function() self.pos_embed:copy_(pos_embed:float():unsqueeze(1)) end)
    local blocks = {}
    for i = 1, depth do blocks[i] = Block(embed_dim, num_heads) end
    self.blocks = nn.ModuleList(blocks)
    self.norm = nn.LayerNorm(embed_dim, { eps = 1e-6 })
end
function VisionTransformer:forward(x, masks)
    -- if not isinstance(masks, list): masks = [masks]
    if masks ~= nil and tide.is_tensor(masks) then masks = { masks } end
    x = self.patch_embed(x)
    x = x + self.pos_embed
    if masks ~= nil then x = apply_masks(x, masks) end
    for _, blk in ipairs(self.blocks) do x = blk(x) end
    return self.norm(x)
end

local VisionTransformerPredictor = nn.Module:extend("VisionTransformerPredictor")
function VisionTransformerPredictor:init(num_patches, embed_dim, predictor_embed_dim, depth,
                                         num_heads)
    self.predictor_embed = nn.Linear(embed_dim, predictor_embed_dim, true)
    self.mask_token = nn.Parameter(tide.zeros(1, 1, predictor_embed_dim))
    self.predictor_pos_embed = nn.Parameter(tide.zeros(1, num_patches, predictor_embed_dim), false)
    local ppe = get_2d_sincos_pos_embed(predictor_embed_dim, math.floor(num_patches ^ 0.5))
    tide.no_grad(function() self.predictor_pos_embed:copy_(ppe:float():unsqueeze(1)) end)
    local blocks = {}
    for i = 1, depth do blocks[i] = Block(predictor_embed_dim, num_heads) end
    self.predictor_blocks = nn.ModuleList(blocks)
    self.predictor_norm = nn.LayerNorm(predictor_embed_dim, { eps = 1e-6 })
    self.predictor_proj = nn.Linear(predictor_embed_dim, embed_dim, true)
    -- trunc_normal_(self.mask_token, std=self.init_std)   (fill below sets the values)
    nn.init.trunc_normal_(self.mask_token, 0, 0.02)
end
function VisionTransformerPredictor:forward(x, masks_x, masks)
    if tide.is_tensor(masks_x) then masks_x = { masks_x } end
    if tide.is_tensor(masks) then masks = { masks } end
    -- B = len(x) // len(masks_x)
    local B = math.floor(#x / #masks_x)
    x = self.predictor_embed(x)
    -- x_pos_embed = self.predictor_pos_embed.repeat(B, 1, 1)
    local x_pos_embed = self.predictor_pos_embed:tile(B, 1, 1)
    -- x += apply_masks(x_pos_embed, masks_x)
    x = x + apply_masks(x_pos_embed, masks_x)
    local N_ctxt = x:size(2)
    local pos_embs = self.predictor_pos_embed:tile(B, 1, 1)
    pos_embs = apply_masks(pos_embs, masks)
    pos_embs = repeat_interleave_batch(pos_embs, B, #masks_x)
    -- pred_tokens = self.mask_token.repeat(pos_embs.size(0), pos_embs.size(1), 1)
    local pred_tokens = self.mask_token:tile(pos_embs:size(1), pos_embs:size(2), 1)
    -- pred_tokens += pos_embs
    pred_tokens = pred_tokens + pos_embs
    -- x = x.repeat(len(masks), 1, 1)
    x = x:tile(#masks, 1, 1)
    x = tide.cat({ x, pred_tokens }, 2)
    for _, blk in ipairs(self.predictor_blocks) do x = blk(x) end
    x = self.predictor_norm(x)
    -- x = x[:, N_ctxt:]
    x = x:narrow(2, N_ctxt + 1, x:size(2) - N_ctxt)
    return self.predictor_proj(x)
end

-- the weights' formula (both sides): 0.1 sin(0.37 i + 0.01 numel + ndim), i from 0
local function fill(m)
    tide.no_grad(function()
        for _, p in ipairs(m:parameters()) do
            if p.requires_grad then
                local n = p:numel()
                local v = (tide.arange(n, { dtype = "float64" }) * 0.37 + 0.01 * n + p:dim())
                    :sin() * 0.1
                p:copy_(v:float():view(p.shape))
            end
        end
    end)
end

-- sum, and the sum against sin(i) (i from 0): PyTorch's summ
local function summ(t)
    t = t:detach():double()
    local w = tide.arange(t:numel(), { dtype = "float64" }):sin():view(t.shape)
    return { t:sum():item(), (t * w):sum():item() }
end

local function collator()
    return MaskCollator({ input_size = 32, patch_size = 4, enc_mask_scale = { 0.85, 1.0 },
        pred_mask_scale = { 0.15, 0.2 }, aspect_ratio = { 0.75, 1.5 }, nenc = 1, npred = 2,
        min_keep = 4, allow_overlap = false })
end

local function plus1(t)
    local out = {}
    for i, v in ipairs(t) do out[i] = type(v) == "table" and plus1(v) or v + 1 end
    return out
end

describe("ported ijepa (masks, ViT encoder / predictor, one I-JEPA step)", function()
    it("MaskCollator: block sizes and the collated masks for the fixed draws", function()
        local mc = collator()
        assert.same({ 3, 3 }, mc:_sample_block_size(mc.pred_mask_scale, mc.aspect_ratio))
        assert.same({ 7, 7 }, mc:_sample_block_size(mc.enc_mask_scale, { 1, 1 }))
        local masks_enc, masks_pred = collator()(2)
        assert.equal(1, #masks_enc)
        assert.equal(2, #masks_pred)
        assert.same(plus1({ { 0, 1, 2, 3, 4, 5, 6, 8, 9, 13, 14, 16, 17, 21, 22, 24, 25, 29, 30,
            35, 36, 37, 38, 43, 44, 45, 46, 51, 52, 53, 54 }, { 0, 1, 2, 3, 8, 9, 10, 11, 16, 17,
            18, 24, 25, 26, 30, 32, 33, 34, 38, 40, 41, 42, 43, 44, 45, 46, 48, 49, 50, 51, 52 } }),
            masks_enc[1]:tolist())
        -- default_collate: masks_pred[j] stacks mask j of each image
        assert.same(plus1({ { 10, 11, 12, 18, 19, 20, 26, 27, 28 },
            { 19, 20, 21, 27, 28, 29, 35, 36, 37 } }), masks_pred[1]:tolist())
        assert.same(plus1({ { 32, 33, 34, 40, 41, 42, 48, 49, 50 },
            { 4, 5, 6, 12, 13, 14, 20, 21, 22 } }), masks_pred[2]:tolist())
    end)

    it("_sample_block_mask: the min_keep loop drops acceptable regions after 20 tries", function()
        local mc = collator()
        mc.d = {}
        for _ = 1, 21 do mc.d[#mc.d + 1] = 0; mc.d[#mc.d + 1] = 0 end
        local none = tide.zeros({ 8, 8 }, { dtype = "int32" })
        local mask, comp = mc:_sample_block_mask({ 3, 3 }, { none })
        assert.equal(0, #mc.d)
        assert.same({ 1, 2, 3, 9, 10, 11, 17, 18, 19 }, mask:tolist())
        assert.equal(55, comp:sum():item())
    end)

    it("apply_masks and repeat_interleave_batch", function()
        local _, masks_pred = collator()(2)
        local x = tide.arange(2 * 64 * 3, { dtype = "float32" }):view(2, 64, 3)
        local got = apply_masks(x, masks_pred)
        assert.same({ 4, 9, 3 }, got.shape)
        assert.same({ { { 30, 31, 32 }, { 33, 34, 35 } }, { { 249, 250, 251 }, { 252, 253, 254 } },
            { { 96, 97, 98 }, { 99, 100, 101 } }, { { 204, 205, 206 }, { 207, 208, 209 } } },
            got:narrow(2, 1, 2):tolist())
        local r = repeat_interleave_batch(tide.arange(4):view(4, 1), 2, 2)
        assert.same({ { 0 }, { 1 }, { 0 }, { 1 }, { 2 }, { 3 }, { 2 }, { 3 } }, r:tolist())
    end)

    it("get_2d_sincos_pos_embed", function()
        local pe = get_2d_sincos_pos_embed(8, 8)
        assert.same({ 64, 8 }, pe.shape)
        assert_close_list({ 164.87773, -1.7520646 }, summ(pe), 1e-6, "pos8")
        assert_close_list({ 0.8414709848078965, 0.009999833334166664, 0.5403023058681397,
            0.9999500004166654, 0.8414709848078965, 0.009999833334166664, 0.5403023058681397,
            0.9999500004166654 }, pe[10]:tolist(), 1e-12, "pos8[9]")
    end)

    it("encoder, predictor, loss, AdamW step and the target encoder's EMA", function()
        local masks_enc, masks_pred = collator()(2)
        local encoder = VisionTransformer(32, 4, 3, 16, 1, 2)
        local predictor = VisionTransformerPredictor(64, 16, 8, 1, 2)
        fill(encoder)
        fill(predictor)
        -- target_encoder = copy.deepcopy(encoder)
        local target_encoder = tide.deepcopy(encoder)
        for _, p in ipairs(target_encoder:parameters()) do p.requires_grad = false end
        local imgs = (tide.arange(2 * 3 * 32 * 32, { dtype = "float64" }) * 0.1):sin():float()
            :view(2, 3, 32, 32)
        local params = {}
        for _, p in ipairs(encoder:parameters()) do params[#params + 1] = p end
        for _, p in ipairs(predictor:parameters()) do params[#params + 1] = p end
        local opt = optim.AdamW(params, { lr = 0.05, weight_decay = 0.04 })
        local want_loss = { 0.4101049, 0.36698315 }
        local want_patch = { { -0.12559389, -0.075320197 }, { -0.12567808, -0.075317159 } }
        local want_fc2 = { { 0.18483246, -0.13251292 }, { 0.18482937, -0.13255702 } }
        for step = 1, 2 do
            -- def forward_target():  with torch.no_grad():
            local h = tide.no_grad(function()
                local h = target_encoder(imgs)
                -- h = F.layer_norm(h, (h.size(-1),))
                h = F.layer_norm(h, { h:size(-1) })
                local B = #h
                h = apply_masks(h, masks_pred)
                return repeat_interleave_batch(h, B, #masks_enc)
            end)
            local z = encoder(imgs, masks_enc)
            if step == 1 then
                assert.same({ 2, 31, 16 }, z.shape)
                assert_close_list({ 14.028227, -0.75406047 }, summ(z), 2e-5, "encoder")
            end
            z = predictor(z, masks_enc, masks_pred)
            if step == 1 then
                assert.same({ 4, 9, 16 }, z.shape)
                assert_close_list({ -3.7503913, 0.14560238 }, summ(z), 2e-5, "predictor")
                assert_close_list({ 3.5776757e-06, -1.3764753 }, summ(h), 2e-5, "target")
            end
            -- loss = F.smooth_l1_loss(z, h)
            local loss = F.smooth_l1_loss(z, h)
            assert_close_list({ want_loss[step] }, { loss:item() }, 2e-5, "loss")
            opt:zero_grad()
            loss:backward()
            opt:step()
            -- m = next(momentum_scheduler)   (its first value, ema[0])
            local m = 0.996
            tide.no_grad(function()
                local ks = target_encoder:parameters()
                for i, q in ipairs(encoder:parameters()) do
                    -- param_k.data.mul_(m).add_((1.-m) * param_q.detach().data)
                    ks[i]:mul_(m):add_((1 - m) * q:detach())
                end
            end)
            assert_close_list(want_patch[step], summ(target_encoder.patch_embed.proj.weight),
                2e-5, "target patch_embed")
            assert_close_list(want_fc2[step], summ(target_encoder.blocks[1].mlp.fc2.weight),
                2e-5, "target fc2")
        end
    end)
end)
