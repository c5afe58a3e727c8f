-- ported_scripts54_spec.lua — facebookresearch/segment-anything's modeling/ ported line for line at tiny sizes: common.py (MLPBlock, LayerNorm2d), image_encoder.py (ImageEncoderViT, Block with window_partition/window_unpartition, Attention with decomposed rel-pos, get_rel_pos, PatchEmbed), prompt_encoder.py, transformer.py and mask_decoder.py, with values checked against PyTorch 1.13 on deterministic weights.
-- Each port keeps the script's calls (a Python keyword is a name in a trailing table), tiny
-- sizes and deterministic data; the Python line stands above each Lua line that differs from it.
-- Dims are 1-based; the classes' Python constructors are declared with nn.signature.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

local function close(a, b, tol)
    assert.is_true(math.abs(a - b) < (tol or 1e-4), ("expected %.6f, got %.6f"):format(b, a))
end

-- The Python checks fill every parameter, in sorted name order k = 1, 2, ..., with
-- 0.2 * sin(0.7 * arange(numel) + k) reshaped to the parameter's shape.
local function fill(m)
    tide.no_grad(function()
        local d = m:named_parameters()
        local names = {}
        for n in pairs(d) do
            if type(n) == "string" then names[#names + 1] = n end
        end
        table.sort(names)
        for k, n in ipairs(names) do
            local p = d[n]
            p:copy_((0.2 * tide.sin(tide.arange(p:numel()):float() * 0.7 + k)):reshape(p.shape))
        end
    end)
end

---------------------------------------------------------------------------------------------
-- segment_anything/modeling/common.py
---------------------------------------------------------------------------------------------
-- class MLPBlock(nn.Module):
local MLPBlock = nn.Module:extend("MLPBlock")
function MLPBlock:init(embedding_dim, mlp_dim, act)
    self.lin1 = nn.Linear(embedding_dim, mlp_dim)
    self.lin2 = nn.Linear(mlp_dim, embedding_dim)
    self.act = act()
end
nn.signature(MLPBlock, "self, embedding_dim: int, mlp_dim: int, act: Type[nn.Module] = nn.GELU")

function MLPBlock:forward(x)
    return self.lin2(self.act(self.lin1(x)))
end

-- class LayerNorm2d(nn.Module):
local LayerNorm2d = nn.Module:extend("LayerNorm2d")
function LayerNorm2d:init(num_channels, eps)
    self.weight = nn.Parameter(tide.ones(num_channels))
    self.bias = nn.Parameter(tide.zeros(num_channels))
    self.eps = eps
end
nn.signature(LayerNorm2d, "self, num_channels: int, eps: float = 1e-6")

function LayerNorm2d:forward(x)
    -- u = x.mean(1, keepdim=True)
    local u = x:mean(2, { keepdim = true })
    local s = (x - u):pow(2):mean(2, { keepdim = true })
    x = (x - u) / tide.sqrt(s + self.eps)
    -- x = self.weight[:, None, None] * x + self.bias[:, None, None]
    x = self.weight[{ {}, tide.newaxis, tide.newaxis }] * x + self.bias[{ {}, tide.newaxis, tide.newaxis }]
    return x
end

---------------------------------------------------------------------------------------------
-- segment_anything/modeling/image_encoder.py
---------------------------------------------------------------------------------------------
local PatchEmbed, Block, Attention, window_partition, window_unpartition, get_rel_pos, add_decomposed_rel_pos

local ImageEncoderViT = nn.Module:extend("ImageEncoderViT")
function ImageEncoderViT:init(img_size, patch_size, in_chans, embed_dim, depth, num_heads, mlp_ratio,
                              out_chans, qkv_bias, norm_layer, act_layer, use_abs_pos, use_rel_pos,
                              rel_pos_zero_init, window_size, global_attn_indexes)
    self.img_size = img_size

    self.patch_embed = PatchEmbed({
        kernel_size = { patch_size, patch_size },
        stride = { patch_size, patch_size },
        in_chans = in_chans,
        embed_dim = embed_dim,
    })

    self.pos_embed = nil
    if use_abs_pos then
        -- torch.zeros(1, img_size // patch_size, img_size // patch_size, embed_dim)
        self.pos_embed = nn.Parameter(
            tide.zeros(1, math.floor(img_size / patch_size), math.floor(img_size / patch_size), embed_dim)
        )
    end

    self.blocks = nn.ModuleList()
    -- for i in range(depth): (global_attn_indexes hold Python's 0-based block numbers)
    for i = 0, depth - 1 do
        -- window_size=window_size if i not in global_attn_indexes else 0,
        local global = false
        for _, g in ipairs(global_attn_indexes) do
            if g == i then global = true end
        end
        local block = Block({
            dim = embed_dim,
            num_heads = num_heads,
            mlp_ratio = mlp_ratio,
            qkv_bias = qkv_bias,
            norm_layer = norm_layer,
            act_layer = act_layer,
            use_rel_pos = use_rel_pos,
            rel_pos_zero_init = rel_pos_zero_init,
            window_size = (not global) and window_size or 0,
            input_size = { math.floor(img_size / patch_size), math.floor(img_size / patch_size) },
        })
        self.blocks:append(block)
    end

    self.neck = nn.Sequential(
        nn.Conv2d(
            embed_dim,
            out_chans,
            { kernel_size = 1,
              bias = false }
        ),
        LayerNorm2d(out_chans),
        nn.Conv2d(
            out_chans,
            out_chans,
            { kernel_size = 3,
              padding = 1,
              bias = false }
        ),
        LayerNorm2d(out_chans)
    )
end
nn.signature(ImageEncoderViT, [==[self, img_size: int = 1024, patch_size: int = 16, in_chans: int = 3,
    embed_dim: int = 768, depth: int = 12, num_heads: int = 12, mlp_ratio: float = 4.0,
    out_chans: int = 256, qkv_bias: bool = True, norm_layer: Type[nn.Module] = nn.LayerNorm,
    act_layer: Type[nn.Module] = nn.GELU, use_abs_pos: bool = True, use_rel_pos: bool = False,
    rel_pos_zero_init: bool = True, window_size: int = 0, global_attn_indexes: Tuple[int, ...] = ()]==])

function ImageEncoderViT:forward(x)
    x = self.patch_embed(x)
    if self.pos_embed ~= nil then
        x = x + self.pos_embed
    end

    for _, blk in ipairs(self.blocks) do
        x = blk(x)
    end

    -- x = self.neck(x.permute(0, 3, 1, 2))
    x = self.neck(x:permute(1, 4, 2, 3))

    return x
end

-- class Block(nn.Module):
Block = nn.Module:extend("Block")
function Block:init(dim, num_heads, mlp_ratio, qkv_bias, norm_layer, act_layer, use_rel_pos,
                    rel_pos_zero_init, window_size, input_size)
    self.norm1 = norm_layer(dim)
    self.attn = Attention(
        dim,
        { num_heads = num_heads,
          qkv_bias = qkv_bias,
          use_rel_pos = use_rel_pos,
          rel_pos_zero_init = rel_pos_zero_init,
          -- input_size=input_size if window_size == 0 else (window_size, window_size),
          input_size = window_size == 0 and input_size or { window_size, window_size } }
    )

    self.norm2 = norm_layer(dim)
    -- self.mlp = MLPBlock(embedding_dim=dim, mlp_dim=int(dim * mlp_ratio), act=act_layer)
    self.mlp = MLPBlock({ embedding_dim = dim, mlp_dim = math.floor(dim * mlp_ratio), act = act_layer })

    self.window_size = window_size
end
nn.signature(Block, [==[self, dim: int, num_heads: int, mlp_ratio: float = 4.0, qkv_bias: bool = True,
    norm_layer: Type[nn.Module] = nn.LayerNorm, act_layer: Type[nn.Module] = nn.GELU,
    use_rel_pos: bool = False, rel_pos_zero_init: bool = True, window_size: int = 0,
    input_size: Optional[Tuple[int, int]] = None]==])

function Block:forward(x)
    local shortcut = x
    x = self.norm1(x)
    -- Window partition
    local H, W, pad_hw
    if self.window_size > 0 then
        -- H, W = x.shape[1], x.shape[2]
        H, W = x.shape[2], x.shape[3]
        x, pad_hw = window_partition(x, self.window_size)
    end

    x = self.attn(x)
    -- Reverse window partition
    if self.window_size > 0 then
        x = window_unpartition(x, self.window_size, pad_hw, { H, W })
    end

    x = shortcut + x
    x = x + self.mlp(self.norm2(x))

    return x
end

-- class Attention(nn.Module):
Attention = nn.Module:extend("Attention")
function Attention:init(dim, num_heads, qkv_bias, use_rel_pos, rel_pos_zero_init, input_size)
    self.num_heads = num_heads
    -- head_dim = dim // num_heads
    local head_dim = math.floor(dim / num_heads)
    self.scale = head_dim ^ -0.5

    self.qkv = nn.Linear(dim, dim * 3, { bias = qkv_bias })
    self.proj = nn.Linear(dim, dim)

    self.use_rel_pos = use_rel_pos
    if self.use_rel_pos then
        assert(
            input_size ~= nil,
            "Input size must be provided if using relative positional encoding.")
        -- initialize relative positional embeddings
        -- torch.zeros(2 * input_size[0] - 1, head_dim)
        self.rel_pos_h = nn.Parameter(tide.zeros(2 * input_size[1] - 1, head_dim))
        self.rel_pos_w = nn.Parameter(tide.zeros(2 * input_size[2] - 1, head_dim))
    end
end
nn.signature(Attention, [==[self, dim: int, num_heads: int = 8, qkv_bias: bool = True,
    use_rel_pos: bool = False, rel_pos_zero_init: bool = True,
    input_size: Optional[Tuple[int, int]] = None]==])

function Attention:forward(x)
    -- B, H, W, _ = x.shape
    local B, H, W = unpack(x.shape)
    -- qkv with shape (3, B, nHead, H * W, C)
    -- qkv = self.qkv(x).reshape(B, H * W, 3, self.num_heads, -1).permute(2, 0, 3, 1, 4)
    local qkv = self.qkv(x):reshape(B, H * W, 3, self.num_heads, -1):permute(3, 1, 4, 2, 5)
    -- q, k, v with shape (B * nHead, H * W, C)
    -- q, k, v = qkv.reshape(3, B * self.num_heads, H * W, -1).unbind(0)
    local q, k, v = unpack(qkv:reshape(3, B * self.num_heads, H * W, -1):unbind(1))

    -- attn = (q * self.scale) @ k.transpose(-2, -1)
    local attn = (q * self.scale):matmul(k:transpose(-2, -1))

    if self.use_rel_pos then
        attn = add_decomposed_rel_pos(attn, q, self.rel_pos_h, self.rel_pos_w, { H, W }, { H, W })
    end

    attn = attn:softmax({ dim = -1 })
    -- x = (attn @ v).view(B, self.num_heads, H, W, -1).permute(0, 2, 3, 1, 4).reshape(B, H, W, -1)
    x = attn:matmul(v):view(B, self.num_heads, H, W, -1):permute(1, 3, 4, 2, 5):reshape(B, H, W, -1)
    x = self.proj(x)

    return x
end

function window_partition(x, window_size)
    -- B, H, W, C = x.shape
    local B, H, W, C = unpack(x.shape)

    local pad_h = (window_size - H % window_size) % window_size
    local pad_w = (window_size - W % window_size) % window_size
    if pad_h > 0 or pad_w > 0 then
        -- x = F.pad(x, (0, 0, 0, pad_w, 0, pad_h))
        x = F.pad(x, { 0, 0, 0, pad_w, 0, pad_h })
    end
    local Hp, Wp = H + pad_h, W + pad_w

    -- x = x.view(B, Hp // window_size, window_size, Wp // window_size, window_size, C)
    x = x:view(B, math.floor(Hp / window_size), window_size, math.floor(Wp / window_size), window_size, C)
    -- windows = x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, window_size, window_size, C)
    local windows = x:permute(1, 2, 4, 3, 5, 6):contiguous():view(-1, window_size, window_size, C)
    -- return windows, (Hp, Wp)
    return windows, { Hp, Wp }
end

function window_unpartition(windows, window_size, pad_hw, hw)
    -- Hp, Wp = pad_hw
    local Hp, Wp = unpack(pad_hw)
    local H, W = unpack(hw)
    -- B = windows.shape[0] // (Hp * Wp // window_size // window_size)
    local B = math.floor(windows.shape[1] / math.floor(math.floor(Hp * Wp / window_size) / window_size))
    local x = windows:view(B, math.floor(Hp / window_size), math.floor(Wp / window_size), window_size, window_size, -1)
    -- x = x.permute(0, 1, 3, 2, 4, 5).contiguous().view(B, Hp, Wp, -1)
    x = x:permute(1, 2, 4, 3, 5, 6):contiguous():view(B, Hp, Wp, -1)

    if Hp > H or Wp > W then
        -- x = x[:, :H, :W, :].contiguous()
        x = x[{ {}, { 1, H }, { 1, W }, {} }]:contiguous()
    end
    return x
end

function get_rel_pos(q_size, k_size, rel_pos)
    -- max_rel_dist = int(2 * max(q_size, k_size) - 1)
    local max_rel_dist = math.floor(2 * math.max(q_size, k_size) - 1)
    -- Interpolate rel pos if needed.
    local rel_pos_resized
    -- if rel_pos.shape[0] != max_rel_dist:
    if rel_pos.shape[1] ~= max_rel_dist then
        -- Interpolate rel pos.
        rel_pos_resized = F.interpolate(
            -- rel_pos.reshape(1, rel_pos.shape[0], -1).permute(0, 2, 1),
            rel_pos:reshape(1, rel_pos.shape[1], -1):permute(1, 3, 2),
            { size = max_rel_dist,
              mode = "linear" }
        )
        -- rel_pos_resized = rel_pos_resized.reshape(-1, max_rel_dist).permute(1, 0)
        rel_pos_resized = rel_pos_resized:reshape(-1, max_rel_dist):permute(2, 1)
    else
        rel_pos_resized = rel_pos
    end

    -- Scale the coords with short length if shapes for q and k are different.
    -- q_coords = torch.arange(q_size)[:, None] * max(k_size / q_size, 1.0)
    local q_coords = tide.arange(q_size)[{ {}, tide.newaxis }] * math.max(k_size / q_size, 1.0)
    local k_coords = tide.arange(k_size)[{ tide.newaxis, {} }] * math.max(q_size / k_size, 1.0)
    local relative_coords = (q_coords - k_coords) + (k_size - 1) * math.max(q_size / k_size, 1.0)

    -- return rel_pos_resized[relative_coords.long()]   (indices are 1-based in tide)
    return rel_pos_resized[relative_coords:long() + 1]
end

function add_decomposed_rel_pos(attn, q, rel_pos_h, rel_pos_w, q_size, k_size)
    -- q_h, q_w = q_size
    local q_h, q_w = unpack(q_size)
    local k_h, k_w = unpack(k_size)
    local Rh = get_rel_pos(q_h, k_h, rel_pos_h)
    local Rw = get_rel_pos(q_w, k_w, rel_pos_w)

    -- B, _, dim = q.shape
    local B, _, dim = unpack(q.shape)
    local r_q = q:reshape(B, q_h, q_w, dim)
    local rel_h = tide.einsum("bhwc,hkc->bhwk", r_q, Rh)
    local rel_w = tide.einsum("bhwc,wkc->bhwk", r_q, Rw)

    -- attn.view(B, q_h, q_w, k_h, k_w) + rel_h[:, :, :, :, None] + rel_w[:, :, :, None, :]
    attn = (
        attn:view(B, q_h, q_w, k_h, k_w) + rel_h[{ {}, {}, {}, {}, tide.newaxis }] + rel_w[{ {}, {}, {}, tide.newaxis, {} }]
    ):view(B, q_h * q_w, k_h * k_w)

    return attn
end

-- class PatchEmbed(nn.Module):
PatchEmbed = nn.Module:extend("PatchEmbed")
function PatchEmbed:init(kernel_size, stride, padding, in_chans, embed_dim)
    self.proj = nn.Conv2d(
        in_chans, embed_dim, { kernel_size = kernel_size, stride = stride, padding = padding }
    )
end
nn.signature(PatchEmbed, [==[self, kernel_size: Tuple[int, int] = (16, 16), stride: Tuple[int, int] = (16, 16),
    padding: Tuple[int, int] = (0, 0), in_chans: int = 3, embed_dim: int = 768]==])

function PatchEmbed:forward(x)
    x = self.proj(x)
    -- B C H W -> B H W C
    -- x = x.permute(0, 2, 3, 1)
    x = x:permute(1, 3, 4, 2)
    return x
end

describe("segment-anything modeling/image_encoder.py", function()
    it("ImageEncoderViT with windowed and global rel-pos attention: shapes and PyTorch's values", function()
        -- enc = ImageEncoderViT(img_size=32, patch_size=8, in_chans=3, embed_dim=16, depth=2, num_heads=2,
        --     mlp_ratio=2.0, out_chans=8, use_rel_pos=True, window_size=3, global_attn_indexes=(1,))
        local enc = ImageEncoderViT({ img_size = 32, patch_size = 8, in_chans = 3, embed_dim = 16, depth = 2, num_heads = 2,
            mlp_ratio = 2.0, out_chans = 8, use_rel_pos = true, window_size = 3, global_attn_indexes = { 1 } })
        assert.are.equal(3, enc.blocks[1].window_size)
        assert.are.equal(0, enc.blocks[2].window_size)
        assert.are.same({ 5, 8 }, enc.blocks[1].attn.rel_pos_h.shape)
        assert.are.same({ 7, 8 }, enc.blocks[2].attn.rel_pos_w.shape)
        fill(enc)
        -- x = torch.sin(torch.arange(2*3*32*32, dtype=torch.float32) * 0.01).reshape(2, 3, 32, 32)
        local x = tide.sin(tide.arange(2 * 3 * 32 * 32, { dtype = tide.float32 }) * 0.01):reshape(2, 3, 32, 32)
        local y = enc(x)
        assert.are.same({ 2, 8, 4, 4 }, y.shape)
        -- PyTorch 1.13: -3.660764 41.088341 0.143204
        close(y:sum():item(), -3.660764, 1e-3)
        close(y:abs():sum():item(), 41.088341, 1e-3)
        close(y[2][3][4][2]:item(), 0.143204)

        -- gradients flow to every parameter (rel-pos tables included) and a few Adam steps train
        local opt = optim.Adam(enc:parameters(), { lr = 1e-2 })
        local target = tide.zeros(2, 8, 4, 4)
        local losses = {}
        for step = 1, 4 do
            opt:zero_grad()
            local loss = F.mse_loss(enc(x), target + 1)
            loss:backward()
            if step == 1 then
                for name, p in enc:named_parameters() do
                    assert.is_true(p.grad ~= nil, name)
                end
                assert.is_true(enc.blocks[1].attn.rel_pos_h.grad:abs():sum():item() > 0)
            end
            opt:step()
            losses[#losses + 1] = loss:item()
        end
        assert_finite(losses[4])
        assert.is_true(losses[4] < losses[1])
    end)

    it("get_rel_pos: the stored table and F.interpolate(mode='linear') when sizes differ", function()
        -- rp = torch.sin(torch.arange(5*4, dtype=torch.float32)).reshape(5, 4)
        local rp = tide.sin(tide.arange(5 * 4, { dtype = tide.float32 })):reshape(5, 4)
        local r = get_rel_pos(4, 4, rp)
        assert.are.same({ 4, 4, 4 }, r.shape)
        close(r:sum():item(), -0.125215)
        close(r[3][2][4]:item(), 0.178780)
        r = get_rel_pos(2, 4, rp)
        assert.are.same({ 2, 4, 4 }, r.shape)
        close(r:sum():item(), 0.786169)
        close(r[2][4][1]:item(), -0.257899)
    end)

    it("window_partition pads with F.pad and window_unpartition crops back", function()
        local x = tide.randn(2, 5, 4, 3)
        local windows, pad_hw = window_partition(x, 3)
        assert.are.same({ 2 * 2 * 2, 3, 3, 3 }, windows.shape)
        assert.are.same({ 6, 6 }, pad_hw)
        local back = window_unpartition(windows, 3, pad_hw, { 5, 4 })
        assert.is_true(tide.equal(back, x))
    end)
end)

---------------------------------------------------------------------------------------------
-- segment_anything/modeling/prompt_encoder.py
---------------------------------------------------------------------------------------------
local PositionEmbeddingRandom

-- class PromptEncoder(nn.Module):
local PromptEncoder = nn.Module:extend("PromptEncoder")
function PromptEncoder:init(embed_dim, image_embedding_size, input_image_size, mask_in_chans, activation)
    self.embed_dim = embed_dim
    self.input_image_size = input_image_size
    self.image_embedding_size = image_embedding_size
    -- self.pe_layer = PositionEmbeddingRandom(embed_dim // 2)
    self.pe_layer = PositionEmbeddingRandom(math.floor(embed_dim / 2))

    self.num_point_embeddings = 4 -- pos/neg point + 2 box corners
    -- point_embeddings = [nn.Embedding(1, embed_dim) for i in range(self.num_point_embeddings)]
    local point_embeddings = {}
    for _ = 1, self.num_point_embeddings do point_embeddings[#point_embeddings + 1] = nn.Embedding(1, embed_dim) end
    self.point_embeddings = nn.ModuleList(point_embeddings)
    self.not_a_point_embed = nn.Embedding(1, embed_dim)

    -- self.mask_input_size = (4 * image_embedding_size[0], 4 * image_embedding_size[1])
    self.mask_input_size = { 4 * image_embedding_size[1], 4 * image_embedding_size[2] }
    self.mask_downscaling = nn.Sequential(
        -- nn.Conv2d(1, mask_in_chans // 4, kernel_size=2, stride=2),
        nn.Conv2d(1, math.floor(mask_in_chans / 4), { kernel_size = 2, stride = 2 }),
        LayerNorm2d(math.floor(mask_in_chans / 4)),
        activation(),
        nn.Conv2d(math.floor(mask_in_chans / 4), mask_in_chans, { kernel_size = 2, stride = 2 }),
        LayerNorm2d(mask_in_chans),
        activation(),
        nn.Conv2d(mask_in_chans, embed_dim, { kernel_size = 1 })
    )
    self.no_mask_embed = nn.Embedding(1, embed_dim)
end
nn.signature(PromptEncoder, [==[self, embed_dim: int, image_embedding_size: Tuple[int, int],
    input_image_size: Tuple[int, int], mask_in_chans: int, activation: Type[nn.Module] = nn.GELU]==])

function PromptEncoder:get_dense_pe()
    -- return self.pe_layer(self.image_embedding_size).unsqueeze(0)
    return self.pe_layer(self.image_embedding_size):unsqueeze(1)
end

function PromptEncoder:_embed_points(points, labels, pad)
    points = points + 0.5 -- Shift to center of pixel
    if pad then
        -- padding_point = torch.zeros((points.shape[0], 1, 2), device=points.device)
        local padding_point = tide.zeros({ points.shape[1], 1, 2 }, { device = points.device })
        local padding_label = -tide.ones({ labels.shape[1], 1 }, { device = labels.device })
        -- points = torch.cat([points, padding_point], dim=1)
        points = tide.cat({ points, padding_point }, { dim = 2 })
        labels = tide.cat({ labels, padding_label }, { dim = 2 })
    end
    local point_embedding = self.pe_layer:forward_with_coords(points, self.input_image_size)
    -- point_embedding[labels == -1] = 0.0
    point_embedding[labels:eq(-1)] = 0.0
    -- point_embedding[labels == -1] += self.not_a_point_embed.weight
    point_embedding[labels:eq(-1)] = point_embedding[labels:eq(-1)] + self.not_a_point_embed.weight
    point_embedding[labels:eq(0)] = point_embedding[labels:eq(0)] + self.point_embeddings[1].weight
    point_embedding[labels:eq(1)] = point_embedding[labels:eq(1)] + self.point_embeddings[2].weight
    return point_embedding
end

function PromptEncoder:_embed_boxes(boxes)
    boxes = boxes + 0.5 -- Shift to center of pixel
    local coords = boxes:reshape(-1, 2, 2)
    local corner_embedding = self.pe_layer:forward_with_coords(coords, self.input_image_size)
    -- corner_embedding[:, 0, :] += self.point_embeddings[2].weight
    corner_embedding[{ {}, 1, {} }] = corner_embedding[{ {}, 1, {} }] + self.point_embeddings[3].weight
    corner_embedding[{ {}, 2, {} }] = corner_embedding[{ {}, 2, {} }] + self.point_embeddings[4].weight
    return corner_embedding
end

function PromptEncoder:_embed_masks(masks)
    local mask_embedding = self.mask_downscaling(masks)
    return mask_embedding
end

function PromptEncoder:_get_batch_size(points, boxes, masks)
    if points ~= nil then
        -- return points[0].shape[0]
        return points[1].shape[1]
    elseif boxes ~= nil then
        return boxes.shape[1]
    elseif masks ~= nil then
        return masks.shape[1]
    else
        return 1
    end
end

function PromptEncoder:_get_device()
    return self.point_embeddings[1].weight.device
end

function PromptEncoder:forward(points, boxes, masks)
    local bs = self:_get_batch_size(points, boxes, masks)
    -- sparse_embeddings = torch.empty((bs, 0, self.embed_dim), device=self._get_device())
    local sparse_embeddings = tide.empty({ bs, 0, self.embed_dim }, { device = self:_get_device() })
    if points ~= nil then
        -- coords, labels = points
        local coords, labels = unpack(points)
        -- point_embeddings = self._embed_points(coords, labels, pad=(boxes is None))
        local point_embeddings = self:_embed_points(coords, labels, boxes == nil)
        sparse_embeddings = tide.cat({ sparse_embeddings, point_embeddings }, { dim = 2 })
    end
    if boxes ~= nil then
        local box_embeddings = self:_embed_boxes(boxes)
        sparse_embeddings = tide.cat({ sparse_embeddings, box_embeddings }, { dim = 2 })
    end

    local dense_embeddings
    if masks ~= nil then
        dense_embeddings = self:_embed_masks(masks)
    else
        -- self.no_mask_embed.weight.reshape(1, -1, 1, 1).expand(bs, -1, self.image_embedding_size[0], self.image_embedding_size[1])
        dense_embeddings = self.no_mask_embed.weight:reshape(1, -1, 1, 1):expand(
            bs, -1, self.image_embedding_size[1], self.image_embedding_size[2]
        )
    end

    return sparse_embeddings, dense_embeddings
end

-- class PositionEmbeddingRandom(nn.Module):
PositionEmbeddingRandom = nn.Module:extend("PositionEmbeddingRandom")
function PositionEmbeddingRandom:init(num_pos_feats, scale)
    if scale == nil or scale <= 0.0 then
        scale = 1.0
    end
    self:register_buffer(
        "positional_encoding_gaussian_matrix",
        -- scale * torch.randn((2, num_pos_feats)),
        scale * tide.randn({ 2, num_pos_feats })
    )
end
nn.signature(PositionEmbeddingRandom, "self, num_pos_feats: int = 64, scale: Optional[float] = None")

function PositionEmbeddingRandom:_pe_encoding(coords)
    -- assuming coords are in [0, 1]^2 square and have d_1 x ... x d_n x 2 shape
    coords = 2 * coords - 1
    -- coords = coords @ self.positional_encoding_gaussian_matrix
    coords = coords:matmul(self.positional_encoding_gaussian_matrix)
    -- coords = 2 * np.pi * coords
    coords = 2 * math.pi * coords
    -- outputs d_1 x ... x d_n x C shape
    -- return torch.cat([torch.sin(coords), torch.cos(coords)], dim=-1)
    return tide.cat({ tide.sin(coords), tide.cos(coords) }, { dim = -1 })
end

function PositionEmbeddingRandom:forward(size)
    -- h, w = size
    local h, w = unpack(size)
    local device = self.positional_encoding_gaussian_matrix.device
    -- grid = torch.ones((h, w), device=device, dtype=torch.float32)
    local grid = tide.ones({ h, w }, { device = device, dtype = tide.float32 })
    -- y_embed = grid.cumsum(dim=0) - 0.5
    local y_embed = grid:cumsum({ dim = 1 }) - 0.5
    local x_embed = grid:cumsum({ dim = 2 }) - 0.5
    y_embed = y_embed / h
    x_embed = x_embed / w

    -- pe = self._pe_encoding(torch.stack([x_embed, y_embed], dim=-1))
    local pe = self:_pe_encoding(tide.stack({ x_embed, y_embed }, { dim = -1 }))
    -- return pe.permute(2, 0, 1)  # C x H x W
    return pe:permute(3, 1, 2) -- C x H x W
end

function PositionEmbeddingRandom:forward_with_coords(coords_input, image_size)
    local coords = coords_input:clone()
    -- coords[:, :, 0] = coords[:, :, 0] / image_size[1]
    coords[{ {}, {}, 1 }] = coords[{ {}, {}, 1 }] / image_size[2]
    coords[{ {}, {}, 2 }] = coords[{ {}, {}, 2 }] / image_size[1]
    -- return self._pe_encoding(coords.to(torch.float))  # B x N x C
    return self:_pe_encoding(coords:to(tide.float))
end

---------------------------------------------------------------------------------------------
-- segment_anything/modeling/transformer.py
---------------------------------------------------------------------------------------------
local TwoWayTransformer = nn.Module:extend("TwoWayTransformer")
local TwoWayAttentionBlock = nn.Module:extend("TwoWayAttentionBlock")
-- transformer.py's own class Attention(nn.Module) (image_encoder.py's is Attention above)
local TAttention = nn.Module:extend("Attention")

function TwoWayTransformer:init(depth, embedding_dim, num_heads, mlp_dim, activation, attention_downsample_rate)
    self.depth = depth
    self.embedding_dim = embedding_dim
    self.num_heads = num_heads
    self.mlp_dim = mlp_dim
    self.layers = nn.ModuleList()

    -- for i in range(depth):
    for i = 0, depth - 1 do
        self.layers:append(
            TwoWayAttentionBlock({
                embedding_dim = embedding_dim,
                num_heads = num_heads,
                mlp_dim = mlp_dim,
                activation = activation,
                attention_downsample_rate = attention_downsample_rate,
                skip_first_layer_pe = (i == 0),
            })
        )
    end

    self.final_attn_token_to_image = TAttention(
        embedding_dim, num_heads, { downsample_rate = attention_downsample_rate }
    )
    self.norm_final_attn = nn.LayerNorm(embedding_dim)
end
nn.signature(TwoWayTransformer, [==[self, depth: int, embedding_dim: int, num_heads: int, mlp_dim: int,
    activation: Type[nn.Module] = nn.ReLU, attention_downsample_rate: int = 2]==])

function TwoWayTransformer:forward(image_embedding, image_pe, point_embedding)
    -- BxCxHxW -> BxHWxC == B x N_image_tokens x C
    -- bs, c, h, w = image_embedding.shape
    local bs, c, h, w = unpack(image_embedding.shape) -- luacheck: ignore
    -- image_embedding = image_embedding.flatten(2).permute(0, 2, 1)
    image_embedding = image_embedding:flatten(3):permute(1, 3, 2)
    image_pe = image_pe:flatten(3):permute(1, 3, 2)

    -- Prepare queries
    local queries = point_embedding
    local keys = image_embedding

    -- Apply transformer blocks and final layernorm
    for _, layer in ipairs(self.layers) do
        queries, keys = layer({
            queries = queries,
            keys = keys,
            query_pe = point_embedding,
            key_pe = image_pe,
        })
    end

    -- Apply the final attention layer from the points to the image
    local q = queries + point_embedding
    local k = keys + image_pe
    -- attn_out = self.final_attn_token_to_image(q=q, k=k, v=keys)
    local attn_out = self.final_attn_token_to_image({ q = q, k = k, v = keys })
    queries = queries + attn_out
    queries = self.norm_final_attn(queries)

    return queries, keys
end

function TwoWayAttentionBlock:init(embedding_dim, num_heads, mlp_dim, activation, attention_downsample_rate,
                                   skip_first_layer_pe)
    self.self_attn = TAttention(embedding_dim, num_heads)
    self.norm1 = nn.LayerNorm(embedding_dim)

    self.cross_attn_token_to_image = TAttention(
        embedding_dim, num_heads, { downsample_rate = attention_downsample_rate }
    )
    self.norm2 = nn.LayerNorm(embedding_dim)

    self.mlp = MLPBlock(embedding_dim, mlp_dim, activation)
    self.norm3 = nn.LayerNorm(embedding_dim)

    self.norm4 = nn.LayerNorm(embedding_dim)
    self.cross_attn_image_to_token = TAttention(
        embedding_dim, num_heads, { downsample_rate = attention_downsample_rate }
    )

    self.skip_first_layer_pe = skip_first_layer_pe
end
nn.signature(TwoWayAttentionBlock, [==[self, embedding_dim: int, num_heads: int, mlp_dim: int = 2048,
    activation: Type[nn.Module] = nn.ReLU, attention_downsample_rate: int = 2,
    skip_first_layer_pe: bool = False]==])

function TwoWayAttentionBlock:forward(queries, keys, query_pe, key_pe)
    -- Self attention block
    local q, k, attn_out
    if self.skip_first_layer_pe then
        queries = self.self_attn({ q = queries, k = queries, v = queries })
    else
        q = queries + query_pe
        attn_out = self.self_attn({ q = q, k = q, v = queries })
        queries = queries + attn_out
    end
    queries = self.norm1(queries)

    -- Cross attention block, tokens attending to image embedding
    q = queries + query_pe
    k = keys + key_pe
    attn_out = self.cross_attn_token_to_image({ q = q, k = k, v = keys })
    queries = queries + attn_out
    queries = self.norm2(queries)

    -- MLP block
    local mlp_out = self.mlp(queries)
    queries = queries + mlp_out
    queries = self.norm3(queries)

    -- Cross attention block, image embedding attending to tokens
    q = queries + query_pe
    k = keys + key_pe
    attn_out = self.cross_attn_image_to_token({ q = k, k = q, v = queries })
    keys = keys + attn_out
    keys = self.norm4(keys)

    return queries, keys
end
nn.signature(TwoWayAttentionBlock, "self, queries: Tensor, keys: Tensor, query_pe: Tensor, key_pe: Tensor", "forward")

function TAttention:init(embedding_dim, num_heads, downsample_rate)
    self.embedding_dim = embedding_dim
    -- self.internal_dim = embedding_dim // downsample_rate
    self.internal_dim = math.floor(embedding_dim / downsample_rate)
    self.num_heads = num_heads
    assert(self.internal_dim % num_heads == 0, "num_heads must divide embedding_dim.")

    self.q_proj = nn.Linear(embedding_dim, self.internal_dim)
    self.k_proj = nn.Linear(embedding_dim, self.internal_dim)
    self.v_proj = nn.Linear(embedding_dim, self.internal_dim)
    self.out_proj = nn.Linear(self.internal_dim, embedding_dim)
end
nn.signature(TAttention, "self, embedding_dim: int, num_heads: int, downsample_rate: int = 1")

function TAttention:_separate_heads(x, num_heads)
    local b, n, c = unpack(x.shape)
    -- x = x.reshape(b, n, num_heads, c // num_heads)
    x = x:reshape(b, n, num_heads, math.floor(c / num_heads))
    -- return x.transpose(1, 2)  # B x N_heads x N_tokens x C_per_head
    return x:transpose(2, 3) -- B x N_heads x N_tokens x C_per_head
end

function TAttention:_recombine_heads(x)
    local b, n_heads, n_tokens, c_per_head = unpack(x.shape)
    x = x:transpose(2, 3)
    return x:reshape(b, n_tokens, n_heads * c_per_head) -- B x N_tokens x C
end

function TAttention:forward(q, k, v)
    -- Input projections
    q = self.q_proj(q)
    k = self.k_proj(k)
    v = self.v_proj(v)

    -- Separate into heads
    q = self:_separate_heads(q, self.num_heads)
    k = self:_separate_heads(k, self.num_heads)
    v = self:_separate_heads(v, self.num_heads)

    -- Attention
    -- _, _, _, c_per_head = q.shape
    local _, _, _, c_per_head = unpack(q.shape)
    -- attn = q @ k.permute(0, 1, 3, 2)  # B x N_heads x N_tokens x N_tokens
    local attn = q:matmul(k:permute(1, 2, 4, 3)) -- B x N_heads x N_tokens x N_tokens
    attn = attn / math.sqrt(c_per_head)
    -- attn = torch.softmax(attn, dim=-1)
    attn = tide.softmax(attn, { dim = -1 })

    -- Get output
    -- out = attn @ v
    local out = attn:matmul(v)
    out = self:_recombine_heads(out)
    out = self.out_proj(out)

    return out
end
nn.signature(TAttention, "self, q: Tensor, k: Tensor, v: Tensor", "forward")

---------------------------------------------------------------------------------------------
-- segment_anything/modeling/mask_decoder.py
---------------------------------------------------------------------------------------------
local MLP = nn.Module:extend("MLP")

-- class MaskDecoder(nn.Module):
local MaskDecoder = nn.Module:extend("MaskDecoder")
function MaskDecoder:init(transformer_dim, transformer, num_multimask_outputs, activation, iou_head_depth,
                          iou_head_hidden_dim)
    self.transformer_dim = transformer_dim
    self.transformer = transformer

    self.num_multimask_outputs = num_multimask_outputs

    self.iou_token = nn.Embedding(1, transformer_dim)
    self.num_mask_tokens = num_multimask_outputs + 1
    self.mask_tokens = nn.Embedding(self.num_mask_tokens, transformer_dim)

    self.output_upscaling = nn.Sequential(
        -- nn.ConvTranspose2d(transformer_dim, transformer_dim // 4, kernel_size=2, stride=2),
        nn.ConvTranspose2d(transformer_dim, math.floor(transformer_dim / 4), { kernel_size = 2, stride = 2 }),
        LayerNorm2d(math.floor(transformer_dim / 4)),
        activation(),
        nn.ConvTranspose2d(math.floor(transformer_dim / 4), math.floor(transformer_dim / 8), { kernel_size = 2, stride = 2 }),
        activation()
    )
    -- self.output_hypernetworks_mlps = nn.ModuleList(
    --     [MLP(transformer_dim, transformer_dim, transformer_dim // 8, 3) for i in range(self.num_mask_tokens)])
    local mlps = {}
    for _ = 1, self.num_mask_tokens do
        mlps[#mlps + 1] = MLP(transformer_dim, transformer_dim, math.floor(transformer_dim / 8), 3)
    end
    self.output_hypernetworks_mlps = nn.ModuleList(mlps)

    self.iou_prediction_head = MLP(
        transformer_dim, iou_head_hidden_dim, self.num_mask_tokens, iou_head_depth
    )
end
nn.signature(MaskDecoder, [==[self, *, transformer_dim: int, transformer: nn.Module, num_multimask_outputs: int = 3,
    activation: Type[nn.Module] = nn.GELU, iou_head_depth: int = 3, iou_head_hidden_dim: int = 256]==])

function MaskDecoder:forward(image_embeddings, image_pe, sparse_prompt_embeddings, dense_prompt_embeddings,
                             multimask_output)
    local masks, iou_pred = self:predict_masks({
        image_embeddings = image_embeddings,
        image_pe = image_pe,
        sparse_prompt_embeddings = sparse_prompt_embeddings,
        dense_prompt_embeddings = dense_prompt_embeddings,
    })

    -- Select the correct mask or masks for output
    local mask_slice
    if multimask_output then
        -- mask_slice = slice(1, None)
        mask_slice = { 2, -1 }
    else
        -- mask_slice = slice(0, 1)
        mask_slice = { 1, 1 }
    end
    -- masks = masks[:, mask_slice, :, :]
    masks = masks[{ {}, mask_slice, {}, {} }]
    iou_pred = iou_pred[{ {}, mask_slice }]

    -- Prepare output
    return masks, iou_pred
end
nn.signature(MaskDecoder, [==[self, image_embeddings: torch.Tensor, image_pe: torch.Tensor,
    sparse_prompt_embeddings: torch.Tensor, dense_prompt_embeddings: torch.Tensor,
    multimask_output: bool]==], "forward")

function MaskDecoder:predict_masks(image_embeddings, image_pe, sparse_prompt_embeddings, dense_prompt_embeddings)
    -- Concatenate output tokens
    -- output_tokens = torch.cat([self.iou_token.weight, self.mask_tokens.weight], dim=0)
    local output_tokens = tide.cat({ self.iou_token.weight, self.mask_tokens.weight }, { dim = 1 })
    -- output_tokens = output_tokens.unsqueeze(0).expand(sparse_prompt_embeddings.size(0), -1, -1)
    output_tokens = output_tokens:unsqueeze(1):expand(sparse_prompt_embeddings:size(1), -1, -1)
    -- tokens = torch.cat((output_tokens, sparse_prompt_embeddings), dim=1)
    local tokens = tide.cat({ output_tokens, sparse_prompt_embeddings }, { dim = 2 })

    -- Expand per-image data in batch direction to be per-mask
    -- src = torch.repeat_interleave(image_embeddings, tokens.shape[0], dim=0)
    local src = tide.repeat_interleave(image_embeddings, tokens.shape[1], { dim = 1 })
    src = src + dense_prompt_embeddings
    local pos_src = tide.repeat_interleave(image_pe, tokens.shape[1], { dim = 1 })
    local b, c, h, w = unpack(src.shape)

    -- Run the transformer
    local hs
    hs, src = self.transformer(src, pos_src, tokens)
    -- iou_token_out = hs[:, 0, :]
    local iou_token_out = hs[{ {}, 1, {} }]
    -- mask_tokens_out = hs[:, 1 : (1 + self.num_mask_tokens), :]
    local mask_tokens_out = hs[{ {}, { 2, 1 + self.num_mask_tokens }, {} }]

    -- Upscale mask embeddings and predict masks using the mask tokens
    -- src = src.transpose(1, 2).view(b, c, h, w)
    src = src:transpose(2, 3):view(b, c, h, w)
    local upscaled_embedding = self.output_upscaling(src)
    local hyper_in_list = {}
    -- for i in range(self.num_mask_tokens):
    for i = 1, self.num_mask_tokens do
        -- hyper_in_list.append(self.output_hypernetworks_mlps[i](mask_tokens_out[:, i, :]))
        hyper_in_list[#hyper_in_list + 1] = self.output_hypernetworks_mlps[i](mask_tokens_out[{ {}, i, {} }])
    end
    -- hyper_in = torch.stack(hyper_in_list, dim=1)
    local hyper_in = tide.stack(hyper_in_list, { dim = 2 })
    b, c, h, w = unpack(upscaled_embedding.shape)
    -- masks = (hyper_in @ upscaled_embedding.view(b, c, h * w)).view(b, -1, h, w)
    local masks = hyper_in:matmul(upscaled_embedding:view(b, c, h * w)):view(b, -1, h, w)

    -- Generate mask quality predictions
    local iou_pred = self.iou_prediction_head(iou_token_out)

    return masks, iou_pred
end
nn.signature(MaskDecoder, [==[self, image_embeddings: torch.Tensor, image_pe: torch.Tensor,
    sparse_prompt_embeddings: torch.Tensor, dense_prompt_embeddings: torch.Tensor]==], "predict_masks")

-- class MLP(nn.Module):
function MLP:init(input_dim, hidden_dim, output_dim, num_layers, sigmoid_output)
    self.num_layers = num_layers
    -- h = [hidden_dim] * (num_layers - 1)
    local h = {}
    for _ = 1, num_layers - 1 do h[#h + 1] = hidden_dim end
    -- nn.ModuleList(nn.Linear(n, k) for n, k in zip([input_dim] + h, h + [output_dim]))
    local ns, ks = { input_dim, unpack(h) }, { unpack(h) }
    ks[#ks + 1] = output_dim
    local layers = {}
    for i = 1, #ns do layers[i] = nn.Linear(ns[i], ks[i]) end
    self.layers = nn.ModuleList(layers)
    self.sigmoid_output = sigmoid_output
end
nn.signature(MLP, [==[self, input_dim: int, hidden_dim: int, output_dim: int, num_layers: int,
    sigmoid_output: bool = False]==])

function MLP:forward(x)
    -- for i, layer in enumerate(self.layers):
    for i, layer in ipairs(self.layers) do
        -- x = F.relu(layer(x)) if i < self.num_layers - 1 else layer(x)
        if i < self.num_layers then x = F.relu(layer(x)) else x = layer(x) end
    end
    if self.sigmoid_output then
        x = F.sigmoid(x)
    end
    return x
end

local function det(shape, s)
    local n = 1
    for _, d in ipairs(shape) do n = n * d end
    return tide.sin(tide.arange(n, { dtype = tide.float32 }) * (s or 0.3)):reshape(unpack(shape))
end

local function check(t, shape, sum, abssum)
    assert.same(shape, t.shape)
    close(t:sum():item(), sum, 2e-3)
    close(t:abs():sum():item(), abssum, 2e-3)
end

describe("segment-anything prompt_encoder.py, transformer.py, mask_decoder.py", function()
    local pe, coords, labels, boxes, masks
    local function make_prompt_encoder()
        -- pe = PromptEncoder(embed_dim=16, image_embedding_size=(4, 4), input_image_size=(32, 32), mask_in_chans=8)
        pe = PromptEncoder({ embed_dim = 16, image_embedding_size = { 4, 4 }, input_image_size = { 32, 32 }, mask_in_chans = 8 })
        fill(pe)
        tide.no_grad(function()
            pe.pe_layer.positional_encoding_gaussian_matrix:copy_(
                0.5 * tide.cos(tide.arange(16, { dtype = tide.float32 })):reshape(2, 8))
        end)
        coords = (det({ 2, 3, 2 }) + 1) * 15
        labels = tide.tensor({ { 1, 0, -1 }, { 1, 1, 0 } })
        boxes = (det({ 2, 4 }, 0.9) + 1) * 15
        masks = det({ 2, 1, 16, 16 }, 0.05)
    end

    it("PromptEncoder: points (padded), boxes, masks, no_mask_embed and get_dense_pe match PyTorch", function()
        make_prompt_encoder()
        assert.is_true(pe.pe_layer.positional_encoding_gaussian_matrix ~= nil)
        assert.same({ 16, 16 }, pe.mask_input_size)
        -- s1, d1 = pe((coords, labels), None, None)
        local s1, d1 = pe({ coords, labels }, nil, nil)
        check(s1, { 2, 4, 16 }, 17.378036, 55.512207)
        check(d1, { 2, 16, 4, 4 }, 6.078250, 67.474068)
        local s2, d2 = pe({ coords, labels }, boxes, masks)
        check(s2, { 2, 5, 16 }, 11.703823, 92.217155)
        check(d2, { 2, 16, 4, 4 }, -9.094672, 56.590027)
        local s3 = pe(nil, boxes, nil)
        check(s3, { 2, 2, 16 }, -4.938126, 40.558182)
        local dense_pe = pe:get_dense_pe()
        check(dense_pe, { 1, 16, 4, 4 }, 8.728497, 168.322235)
    end)

    it("TwoWayTransformer and MaskDecoder (repeat_interleave, hypernetwork MLPs, iou head) match PyTorch and train", function()
        make_prompt_encoder()
        local s1, d1 = pe({ coords, labels }, nil, nil)
        local s2, d2 = pe({ coords, labels }, boxes, masks)
        local dense_pe = pe:get_dense_pe()
        -- transformer = TwoWayTransformer(depth=2, embedding_dim=16, mlp_dim=32, num_heads=2)
        local transformer = TwoWayTransformer({ depth = 2, embedding_dim = 16, mlp_dim = 32, num_heads = 2 })
        -- dec = MaskDecoder(transformer_dim=16, transformer=transformer, num_multimask_outputs=3,
        --     iou_head_depth=3, iou_head_hidden_dim=16)
        local dec = MaskDecoder({ transformer_dim = 16, transformer = transformer, num_multimask_outputs = 3,
            iou_head_depth = 3, iou_head_hidden_dim = 16 })
        assert.is_true(transformer.layers[1].skip_first_layer_pe)
        assert.is_false(transformer.layers[2].skip_first_layer_pe)
        assert.are.equal(8, transformer.layers[1].cross_attn_token_to_image.internal_dim)
        fill(dec)
        local img = det({ 1, 16, 4, 4 }, 0.11)
        -- m, iou = dec(img, dense_pe, s2, d2, multimask_output=True)
        local m, iou = dec(img, dense_pe, s2, d2, { multimask_output = true })
        check(m, { 2, 3, 16, 16 }, 16.906708, 16.906708)
        check(iou, { 2, 3 }, 0.534517, 1.015873)
        close(iou[2][1]:item(), -0.12034005671739578)
        close(iou[2][3]:item(), 0.21614453196525574)
        local m1, iou1 = dec(img, dense_pe, s1, d1, { multimask_output = false })
        check(m1, { 2, 1, 16, 16 }, 1.460635, 1.998739)
        check(iou1, { 2, 1 }, -0.688140, 0.688140)
        local q, k = transformer(img, dense_pe, s2)
        check(q, { 2, 5, 16 }, -11.935425, 31.322254)
        check(k, { 2, 16, 16 }, 37.125252, 85.107780)

        -- train prompt encoder + decoder a few steps on a random target mask
        local params = dec:parameters()
        for _, p in ipairs(pe:parameters()) do params[#params + 1] = p end
        local opt = optim.Adam(params, { lr = 1e-2 })
        -- target = (torch.rand(2, 3, 16, 16) > 0.5).float()
        local target = tide.rand(2, 3, 16, 16):gt(0.5):float()
        local losses = {}
        for step = 1, 4 do
            opt:zero_grad()
            local sp, dn = pe({ coords, labels }, boxes, masks)
            local pred, iou_pred = dec(img, pe:get_dense_pe(), sp, dn, { multimask_output = true })
            local loss = F.binary_cross_entropy_with_logits(pred, target) + F.mse_loss(iou_pred, tide.ones(2, 3))
            loss:backward()
            if step == 1 then
                assert.is_true(pe.not_a_point_embed.weight.grad:abs():sum():item() > 0) -- labels == -1
                assert.is_true(pe.point_embeddings[1].weight.grad:abs():sum():item() > 0)
                assert.is_true(pe.point_embeddings[4].weight.grad:abs():sum():item() > 0)
                assert.is_true(dec.output_hypernetworks_mlps[4].layers[3].weight.grad:abs():sum():item() > 0)
            end
            opt:step()
            losses[#losses + 1] = loss:item()
        end
        assert_finite(losses[4])
        assert.is_true(losses[4] < losses[1])
    end)
end)

---------------------------------------------------------------------------------------------
-- segment_anything/modeling/sam.py
---------------------------------------------------------------------------------------------
-- class Sam(nn.Module):
local Sam = nn.Module:extend("Sam")
-- mask_threshold: float = 0.0
Sam.mask_threshold = 0.0
-- image_format: str = "RGB"
Sam.image_format = "RGB"

function Sam:init(image_encoder, prompt_encoder, mask_decoder, pixel_mean, pixel_std)
    self.image_encoder = image_encoder
    self.prompt_encoder = prompt_encoder
    self.mask_decoder = mask_decoder
    -- self.register_buffer("pixel_mean", torch.Tensor(pixel_mean).view(-1, 1, 1), False)
    self:register_buffer("pixel_mean", tide.Tensor(pixel_mean):view(-1, 1, 1), false)
    self:register_buffer("pixel_std", tide.Tensor(pixel_std):view(-1, 1, 1), false)
end
nn.signature(Sam, [==[self, image_encoder: ImageEncoderViT, prompt_encoder: PromptEncoder, mask_decoder: MaskDecoder,
    pixel_mean: List[float] = [123.675, 116.28, 103.53], pixel_std: List[float] = [58.395, 57.12, 57.375]]==])

-- @property def device(self): (a method in Lua)
function Sam:device()
    return self.pixel_mean.device
end

-- @torch.no_grad()
-- def forward(self, batched_input, multimask_output):
Sam.forward = tide.no_grad()(function(self, batched_input, multimask_output)
    -- input_images = torch.stack([self.preprocess(x["image"]) for x in batched_input], dim=0)
    local images = {}
    for _, x in ipairs(batched_input) do images[#images + 1] = self:preprocess(x["image"]) end
    local input_images = tide.stack(images, { dim = 1 })
    local image_embeddings = self.image_encoder(input_images)

    local outputs = {}
    -- for image_record, curr_embedding in zip(batched_input, image_embeddings):
    for i, curr_embedding in ipairs(image_embeddings:unbind()) do
        local image_record = batched_input[i]
        local points
        -- if "point_coords" in image_record:
        if image_record["point_coords"] ~= nil then
            points = { image_record["point_coords"], image_record["point_labels"] }
        else
            points = nil
        end
        -- self.prompt_encoder(points=points, boxes=image_record.get("boxes", None), masks=image_record.get("mask_inputs", None))
        -- (positional: a nil in a Lua table is no entry)
        local sparse_embeddings, dense_embeddings = self.prompt_encoder(
            points,
            image_record["boxes"],
            image_record["mask_inputs"]
        )
        local low_res_masks, iou_predictions = self.mask_decoder({
            image_embeddings = curr_embedding:unsqueeze(1),
            image_pe = self.prompt_encoder:get_dense_pe(),
            sparse_prompt_embeddings = sparse_embeddings,
            dense_prompt_embeddings = dense_embeddings,
            multimask_output = multimask_output,
        })
        local masks = self:postprocess_masks(
            low_res_masks,
            -- input_size=image_record["image"].shape[-2:],
            { input_size = image_record["image"].shape[{ { -2, -1 } }],
              original_size = image_record["original_size"] }
        )
        -- masks = masks > self.mask_threshold
        masks = masks:gt(self.mask_threshold)
        outputs[#outputs + 1] = {
            masks = masks,
            iou_predictions = iou_predictions,
            low_res_logits = low_res_masks,
        }
    end
    return outputs
end)
nn.signature(Sam, "self, batched_input: List[Dict[str, Any]], multimask_output: bool", "forward")

function Sam:postprocess_masks(masks, input_size, original_size)
    masks = F.interpolate(
        masks,
        { self.image_encoder.img_size, self.image_encoder.img_size },
        { mode = "bilinear",
          align_corners = false }
    )
    -- masks = masks[..., : input_size[0], : input_size[1]]
    masks = masks[{ "...", { 1, input_size[1] }, { 1, input_size[2] } }]
    masks = F.interpolate(masks, original_size, { mode = "bilinear", align_corners = false })
    return masks
end
nn.signature(Sam, "self, masks: torch.Tensor, input_size: Tuple[int, ...], original_size: Tuple[int, ...]",
    "postprocess_masks")

function Sam:preprocess(x)
    -- Normalize colors
    x = (x - self.pixel_mean) / self.pixel_std

    -- Pad
    -- h, w = x.shape[-2:]
    local h, w = unpack(x.shape[{ { -2, -1 } }])
    local padh = self.image_encoder.img_size - h
    local padw = self.image_encoder.img_size - w
    -- x = F.pad(x, (0, padw, 0, padh))
    x = F.pad(x, { 0, padw, 0, padh })
    return x
end

describe("segment-anything modeling/sam.py", function()
    it("Sam: preprocess, image encoder, prompts per image, mask decoder, postprocess_masks match PyTorch", function()
        local sam = Sam({
            image_encoder = ImageEncoderViT({ img_size = 32, patch_size = 8, embed_dim = 16, depth = 2, num_heads = 2, mlp_ratio = 2.0,
                out_chans = 16, use_rel_pos = true, window_size = 2, global_attn_indexes = { 1 } }),
            prompt_encoder = PromptEncoder({ embed_dim = 16, image_embedding_size = { 4, 4 }, input_image_size = { 32, 32 }, mask_in_chans = 8 }),
            mask_decoder = MaskDecoder({ num_multimask_outputs = 3, transformer = TwoWayTransformer({ depth = 2, embedding_dim = 16, mlp_dim = 32, num_heads = 2 }),
                transformer_dim = 16, iou_head_depth = 3, iou_head_hidden_dim = 16 }),
        })
        fill(sam)
        tide.no_grad(function()
            sam.prompt_encoder.pe_layer.positional_encoding_gaussian_matrix:copy_(
                0.5 * tide.cos(tide.arange(16, { dtype = tide.float32 })):reshape(2, 8))
        end)
        -- register_buffer(..., False): not in the state_dict
        assert.is_nil(sam:state_dict()["pixel_mean"])
        assert.are.equal("cpu", tostring(sam:device()))
        local batched_input = {
            { image = (det({ 3, 30, 28 }, 0.01) + 1) * 127, original_size = { 40, 36 },
              point_coords = (det({ 2, 2, 2 }) + 1) * 14, point_labels = tide.tensor({ { 1, 0 }, { 1, 1 } }) },
            { image = (det({ 3, 32, 24 }, 0.02) + 1) * 127, original_size = { 48, 36 },
              boxes = (det({ 1, 4 }, 0.9) + 1) * 12 },
        }
        -- outs = sam(batched_input, multimask_output=False)
        local outs = sam(batched_input, { multimask_output = false })
        local o1, o2 = outs[1], outs[2]
        assert.same({ 2, 1, 40, 36 }, o1["masks"].shape)
        assert.are.equal("bool", o1["masks"].dtype)
        assert.are.equal(2880, o1["masks"]:sum():item())
        assert.same({ 2, 1, 16, 16 }, o1["low_res_logits"].shape)
        close(o1["low_res_logits"]:sum():item(), 7.628776, 2e-3)
        close(o1["iou_predictions"][1][1]:item(), -0.257107)
        assert.same({ 1, 1, 48, 36 }, o2["masks"].shape)
        close(o2["low_res_logits"]:sum():item(), 3.814197, 2e-3)
        close(o2["iou_predictions"][1][1]:item(), -0.257101)
        assert.is_nil(o1["low_res_logits"].grad_fn)
        -- pm = sam.postprocess_masks(outs[0]["low_res_logits"], input_size=(30, 28), original_size=(40, 36))
        local pm = sam:postprocess_masks(o1["low_res_logits"], { input_size = { 30, 28 }, original_size = { 40, 36 } })
        assert.same({ 2, 1, 40, 36 }, pm.shape)
        close(pm:sum():item(), 42.650692, 2e-3)
        close(pm[2][1][8][6]:item(), 0.014840)
    end)
end)

---------------------------------------------------------------------------------------------
-- segment_anything/utils/amg.py's torch helpers (calculate_stability_score, batched_mask_to_box)
---------------------------------------------------------------------------------------------
local function calculate_stability_score(masks, mask_threshold, threshold_offset)
    -- (masks > (mask_threshold + threshold_offset)).sum(-1, dtype=torch.int16).sum(-1, dtype=torch.int32)
    -- tide has no int16 (int32 for both sums here); asking for it raises naming tide's dtypes
    local ok, err = pcall(function() return masks:gt(0):sum(-1, { dtype = tide.int16 }) end)
    assert(not ok and err:find('tide: sum: dtype "int16" is not one of tide\'s', 1, true), err)
    local intersections = masks:gt(mask_threshold + threshold_offset)
        :sum(-1, { dtype = tide.int32 })
        :sum(-1, { dtype = tide.int32 })
    local unions = masks:gt(mask_threshold - threshold_offset)
        :sum(-1, { dtype = tide.int32 })
        :sum(-1, { dtype = tide.int32 })
    return intersections / unions
end

local function batched_mask_to_box(masks)
    -- if torch.numel(masks) == 0: return torch.zeros(*masks.shape[:-2], 4, device=masks.device)
    if tide.numel(masks) == 0 then
        return tide.zeros(masks.shape[{ { 1, -3 } }] + { 4 }, { device = masks.device })
    end
    local shape = masks.shape
    -- h, w = shape[-2:]
    local h, w = unpack(shape[{ { -2, -1 } }])
    if #shape > 2 then
        -- masks = masks.flatten(0, -3)
        masks = masks:flatten(1, -3)
    else
        masks = masks:unsqueeze(1)
    end
    -- in_height, _ = torch.max(masks, dim=-1)
    local in_height = tide.max(masks, { dim = -1 })
    local in_height_coords = in_height * tide.arange(h, { device = in_height.device })[{ tide.newaxis, {} }]
    local bottom_edges = tide.max(in_height_coords, { dim = -1 })
    -- in_height_coords = in_height_coords + h * (~in_height)
    in_height_coords = in_height_coords + h * in_height:bitwise_not()
    local top_edges = tide.min(in_height_coords, { dim = -1 })

    local in_width = tide.max(masks, { dim = -2 })
    local in_width_coords = in_width * tide.arange(w, { device = in_width.device })[{ tide.newaxis, {} }]
    local right_edges = tide.max(in_width_coords, { dim = -1 })
    in_width_coords = in_width_coords + w * in_width:bitwise_not()
    local left_edges = tide.min(in_width_coords, { dim = -1 })

    -- empty_filter = (right_edges < left_edges) | (bottom_edges < top_edges)
    local empty_filter = right_edges:lt(left_edges):logical_or(bottom_edges:lt(top_edges))
    local out = tide.stack({ left_edges, top_edges, right_edges, bottom_edges }, { dim = -1 })
    -- out = out * (~empty_filter).unsqueeze(-1)
    out = out * empty_filter:bitwise_not():unsqueeze(-1)
    if #shape > 2 then
        -- out = out.reshape(*shape[:-2], 4)
        out = out:reshape(shape[{ { 1, -3 } }] + { 4 })
    else
        out = out[1]
    end
    return out
end

describe("segment-anything utils/amg.py", function()
    it("sum/cumsum/prod with an integer dtype give that dtype, as PyTorch's", function()
        local b = tide.tensor({ { true, false, true }, { true, true, true } })
        assert.are.equal("int32", b:sum(-1, { dtype = tide.int32 }).dtype)
        assert.are.equal("int32", b:sum({ dim = { 1, 2 }, dtype = tide.int32 }).dtype)
        assert.are.equal("int32", tide.sum(b, -1, { dtype = tide.int32 }).dtype)
        assert.are.equal("int32", b:int():prod(2, { dtype = tide.int32 }).dtype)
        assert.are.equal("int32", b:cumsum(2, { dtype = tide.int32 }).dtype)
        assert.same({ { 1, 1, 2 }, { 1, 2, 3 } }, b:cumsum(2, { dtype = tide.int32 }):tolist())
        assert.are.equal("int64", b:sum(-1).dtype)
        assert.are.equal("int64", b:cumsum(2).dtype)
        assert.are.equal("float64", b:sum(-1, { dtype = tide.float64 }).dtype)
    end)

    it("calculate_stability_score and batched_mask_to_box", function()
        local masks = tide.full({ 2, 1, 4, 5 }, -5.0)
        masks[{ 1, 1, { 2, 3 }, { 2, 4 } }] = 2.0
        masks[{ 1, 1, 2, 2 }] = 0.5
        local s = calculate_stability_score(masks, 0.0, 1.0)
        assert.same({ 2, 1 }, s.shape)
        close(s[1][1]:item(), 5 / 6)
        assert.is_true(s[2][1]:item() ~= s[2][1]:item()) -- 0 / 0, NaN as PyTorch's
        local boxes = batched_mask_to_box(masks:gt(0.0))
        assert.same({ 2, 1, 4 }, boxes.shape)
        -- PyTorch: [[[1, 1, 3, 2]], [[0, 0, 0, 0]]] (0-based pixel coordinates, as the boxes are data)
        assert.same({ { { 1, 1, 3, 2 } }, { { 0, 0, 0, 0 } } }, boxes:tolist())
        assert.same({ 3, 4 }, batched_mask_to_box(tide.zeros(3, 0, 5):gt(0)).shape)
    end)
end)
