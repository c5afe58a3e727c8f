-- ported_scripts103_spec.lua — chinhsuanwu/coatnet-pytorch's coatnet.py (conv_3x3_bn, PreNorm,
-- SE, FeedForward, MBConv with its downsample path, Attention with the relative_bias_table
-- nn.Parameter and the relative_index buffer from meshgrid / flatten / coordinate arithmetic,
-- the gather / repeat / rearrange of the bias into the attention, Transformer with its
-- downsample pools and einops Rearrange layers, CoAtNet with _make_layer, coatnet_0's
-- constructor pattern), ported line for line at tiny sizes: a 3x32x32 image, one block per
-- stage, channels {4, 8, 8, 16, 16}, block types C C T T, 3 classes, heads of dim 8. The
-- Python line stands above each Lua line that differs from it. Dims and class targets are
-- 1-based; so is relative_index (PyTorch's 0-based gather index plus one). Values: PyTorch
-- 1.13 on the same weights (einops' rearranges written out with permute / reshape there).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
-- from einops import rearrange
local rearrange = tide.einops.rearrange
-- from einops.layers.torch import Rearrange
local Rearrange = tide.einops.layers.Rearrange
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- PyTorch 1.13's values for the same weights and inputs (BatchNorm in eval mode)
local REF = {
    -- Attention(8, 16, (2, 3), heads=2).relative_index.flatten() (0-based)
    relidx = { 7, 6, 5, 2, 1, 0, 8, 7, 6, 3, 2, 1, 9, 8, 7, 4, 3, 2, 12, 11, 10, 7, 6, 5, 13, 12,
        11, 8, 7, 6, 14, 13, 12, 9, 8, 7 },
    -- the model's s3 Transformer's (image 2x2)
    relidx_s3 = { 4, 3, 1, 0, 5, 4, 2, 1, 7, 6, 4, 3, 8, 7, 5, 4 },
    -- that Attention's output: shape, sum, sum of |.|, first four entries
    attn = { { 2, 6, 16 }, 1.0847773551940918, 47.63151168823242,
        { 0.0516345, -0.123158, -0.2698784, -0.2638887 } },
    n_params = 58,
    count = 12268,
    first_names = { "s0.0.0.weight", "s0.0.1.weight", "s0.0.1.bias", "s1.0.proj.weight",
        "s1.0.conv.norm.weight", "s1.0.conv.norm.bias", "s1.0.conv.fn.0.weight",
        "s1.0.conv.fn.1.weight", "s1.0.conv.fn.1.bias", "s1.0.conv.fn.3.weight",
        "s1.0.conv.fn.4.weight", "s1.0.conv.fn.4.bias" },
    logits = { -1.6590091, 0.1364621, 1.8349169, -1.659472, 0.1370006, 1.8360741 },
    -- cross_entropy before each of 2 AdamW(lr=1e-2) steps and after them (train mode)
    loss = { 1.9520012140274048, 1.3904659748077393, 1.063189148902893 },
}

-- the heads' dim: coatnet.py's default dim_head=32, 8 here (tiny sizes)
local DIM_HEAD = 8

-- def conv_3x3_bn(inp, oup, image_size, downsample=False):
local function conv_3x3_bn(inp, oup, image_size, downsample) -- luacheck: ignore image_size
    -- _make_layer's keyword downsample=True arrives as a table by name
    if type(downsample) == "table" then downsample = downsample.downsample end
    -- stride = 1 if downsample == False else 2
    local stride = (not downsample) and 1 or 2
    return nn.Sequential(
        -- nn.Conv2d(inp, oup, 3, stride, 1, bias=False),
        nn.Conv2d(inp, oup, 3, stride, 1, { bias = false }),
        nn.BatchNorm2d(oup),
        nn.GELU()
    )
end

-- class PreNorm(nn.Module):
local PreNorm = nn.Module:extend("PreNorm")
nn.signature(PreNorm, "dim, fn, norm")
function PreNorm:init(dim, fn, norm)
    self.norm = norm(dim)
    self.fn = fn
end
-- def forward(self, x, **kwargs):
function PreNorm:forward(x, ...)
    -- return self.fn(self.norm(x), **kwargs)
    return self.fn(self.norm(x), ...)
end

-- class SE(nn.Module):
local SE = nn.Module:extend("SE")
nn.signature(SE, "inp, oup, expansion=0.25")
function SE:init(inp, oup, expansion)
    self.avg_pool = nn.AdaptiveAvgPool2d(1)
    self.fc = nn.Sequential(
        -- nn.Linear(oup, int(inp * expansion), bias=False),
        nn.Linear(oup, math.floor(inp * expansion), { bias = false }),
        nn.GELU(),
        -- nn.Linear(int(inp * expansion), oup, bias=False),
        nn.Linear(math.floor(inp * expansion), oup, { bias = false }),
        nn.Sigmoid()
    )
end
function SE:forward(x)
    -- b, c, _, _ = x.size()
    local b, c = unpack(x:size())
    -- y = self.avg_pool(x).view(b, c)
    local y = self.avg_pool(x):view(b, c)
    -- y = self.fc(y).view(b, c, 1, 1)
    y = self.fc(y):view(b, c, 1, 1)
    return x * y
end

-- class FeedForward(nn.Module):
local FeedForward = nn.Module:extend("FeedForward")
nn.signature(FeedForward, "dim, hidden_dim, dropout=0.")
function FeedForward:init(dim, hidden_dim, dropout)
    self.net = nn.Sequential(
        nn.Linear(dim, hidden_dim),
        nn.GELU(),
        nn.Dropout(dropout),
        nn.Linear(hidden_dim, dim),
        nn.Dropout(dropout)
    )
end
function FeedForward:forward(x)
    return self.net(x)
end

-- class MBConv(nn.Module):
local MBConv = nn.Module:extend("MBConv")
nn.signature(MBConv, "inp, oup, image_size, downsample=False, expansion=4")
function MBConv:init(inp, oup, image_size, downsample, expansion) -- luacheck: ignore image_size
    self.downsample = downsample
    -- stride = 1 if self.downsample == False else 2
    local stride = (not self.downsample) and 1 or 2
    -- hidden_dim = int(inp * expansion)
    local hidden_dim = math.floor(inp * expansion)

    if self.downsample then
        self.pool = nn.MaxPool2d(3, 2, 1)
        -- self.proj = nn.Conv2d(inp, oup, 1, 1, 0, bias=False)
        self.proj = nn.Conv2d(inp, oup, 1, 1, 0, { bias = false })
    end

    if expansion == 1 then
        self.conv = nn.Sequential(
            -- dw
            -- nn.Conv2d(hidden_dim, hidden_dim, 3, stride,
            --           1, groups=hidden_dim, bias=False),
            nn.Conv2d(hidden_dim, hidden_dim, 3, stride, 1, { groups = hidden_dim, bias = false }),
            nn.BatchNorm2d(hidden_dim),
            nn.GELU(),
            -- pw-linear
            -- nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),
            nn.Conv2d(hidden_dim, oup, 1, 1, 0, { bias = false }),
            nn.BatchNorm2d(oup)
        )
    else
        self.conv = nn.Sequential(
            -- pw
            -- down-sample in the first conv
            -- nn.Conv2d(inp, hidden_dim, 1, stride, 0, bias=False),
            nn.Conv2d(inp, hidden_dim, 1, stride, 0, { bias = false }),
            nn.BatchNorm2d(hidden_dim),
            nn.GELU(),
            -- dw
            -- nn.Conv2d(hidden_dim, hidden_dim, 3, 1, 1,
            --           groups=hidden_dim, bias=False),
            nn.Conv2d(hidden_dim, hidden_dim, 3, 1, 1, { groups = hidden_dim, bias = false }),
            nn.BatchNorm2d(hidden_dim),
            nn.GELU(),
            SE(inp, hidden_dim),
            -- pw-linear
            -- nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),
            nn.Conv2d(hidden_dim, oup, 1, 1, 0, { bias = false }),
            nn.BatchNorm2d(oup)
        )
    end

    self.conv = PreNorm(inp, self.conv, nn.BatchNorm2d)
end
function MBConv:forward(x)
    if self.downsample then
        return self.proj(self.pool(x)) + self.conv(x)
    else
        return x + self.conv(x)
    end
end

-- class Attention(nn.Module):
local Attention = nn.Module:extend("Attention")
-- def __init__(self, inp, oup, image_size, heads=8, dim_head=32, dropout=0.):
nn.signature(Attention, "inp, oup, image_size, heads=8, dim_head=" .. DIM_HEAD .. ", dropout=0.")
function Attention:init(inp, oup, image_size, heads, dim_head, dropout)
    local inner_dim = dim_head * heads
    -- project_out = not (heads == 1 and dim_head == inp)
    local project_out = not (heads == 1 and dim_head == inp)

    -- self.ih, self.iw = image_size
    self.ih, self.iw = image_size[1], image_size[2]

    self.heads = heads
    self.scale = dim_head ^ -0.5

    -- parameter table of relative position bias
    -- self.relative_bias_table = nn.Parameter(
    --     torch.zeros((2 * self.ih - 1) * (2 * self.iw - 1), heads))
    self.relative_bias_table = nn.Parameter(
        tide.zeros((2 * self.ih - 1) * (2 * self.iw - 1), heads))

    -- coords = torch.meshgrid((torch.arange(self.ih), torch.arange(self.iw)))
    local coords = tide.meshgrid({ tide.arange(self.ih), tide.arange(self.iw) })
    -- coords = torch.flatten(torch.stack(coords), 1)
    coords = tide.flatten(tide.stack(coords), 2)
    -- relative_coords = coords[:, :, None] - coords[:, None, :]
    local relative_coords = coords:unsqueeze(3) - coords:unsqueeze(2)

    -- relative_coords[0] += self.ih - 1
    relative_coords[1]:add_(self.ih - 1)
    -- relative_coords[1] += self.iw - 1
    relative_coords[2]:add_(self.iw - 1)
    -- relative_coords[0] *= 2 * self.iw - 1
    relative_coords[1]:mul_(2 * self.iw - 1)
    relative_coords = rearrange(relative_coords, "c h w -> h w c")
    -- relative_index = relative_coords.sum(-1).flatten().unsqueeze(1)
    -- (+ 1: tide's gather takes 1-based indices)
    local relative_index = relative_coords:sum(-1):flatten():unsqueeze(2) + 1
    self:register_buffer("relative_index", relative_index)

    -- self.attend = nn.Softmax(dim=-1)
    self.attend = nn.Softmax({ dim = -1 })
    -- self.to_qkv = nn.Linear(inp, inner_dim * 3, bias=False)
    self.to_qkv = nn.Linear(inp, inner_dim * 3, { bias = false })

    -- self.to_out = nn.Sequential(
    --     nn.Linear(inner_dim, oup),
    --     nn.Dropout(dropout)
    -- ) if project_out else nn.Identity()
    if project_out then
        self.to_out = nn.Sequential(nn.Linear(inner_dim, oup), nn.Dropout(dropout))
    else
        self.to_out = nn.Identity()
    end
end
function Attention:forward(x)
    -- qkv = self.to_qkv(x).chunk(3, dim=-1)
    local qkv = self.to_qkv(x):chunk(3, -1)
    -- q, k, v = map(lambda t: rearrange(
    --     t, 'b n (h d) -> b h n d', h=self.heads), qkv)
    local qkv_heads = {}
    for i, t in ipairs(qkv) do
        qkv_heads[i] = rearrange(t, "b n (h d) -> b h n d", { h = self.heads })
    end
    local q, k, v = unpack(qkv_heads)

    -- dots = torch.matmul(q, k.transpose(-1, -2)) * self.scale
    local dots = tide.matmul(q, k:transpose(-1, -2)) * self.scale

    -- Use "gather" for more efficiency on GPUs
    -- relative_bias = self.relative_bias_table.gather(
    --     0, self.relative_index.repeat(1, self.heads))
    local relative_bias = self.relative_bias_table:gather(
        1, self.relative_index["repeat"](self.relative_index, 1, self.heads))
    -- relative_bias = rearrange(
    --     relative_bias, '(h w) c -> 1 c h w', h=self.ih*self.iw, w=self.ih*self.iw)
    relative_bias = rearrange(
        relative_bias, "(h w) c -> 1 c h w", { h = self.ih * self.iw, w = self.ih * self.iw })
    dots = dots + relative_bias

    local attn = self.attend(dots)
    -- out = torch.matmul(attn, v)
    local out = tide.matmul(attn, v)
    out = rearrange(out, "b h n d -> b n (h d)")
    out = self.to_out(out)
    return out
end

-- class Transformer(nn.Module):
local Transformer = nn.Module:extend("Transformer")
-- def __init__(self, inp, oup, image_size, heads=8, dim_head=32, downsample=False, dropout=0.):
nn.signature(Transformer, "inp, oup, image_size, heads=8, dim_head=" .. DIM_HEAD ..
    ", downsample=False, dropout=0.")
function Transformer:init(inp, oup, image_size, heads, dim_head, downsample, dropout)
    -- hidden_dim = int(inp * 4)
    local hidden_dim = math.floor(inp * 4)

    -- self.ih, self.iw = image_size
    self.ih, self.iw = image_size[1], image_size[2]
    self.downsample = downsample

    if self.downsample then
        self.pool1 = nn.MaxPool2d(3, 2, 1)
        self.pool2 = nn.MaxPool2d(3, 2, 1)
        -- self.proj = nn.Conv2d(inp, oup, 1, 1, 0, bias=False)
        self.proj = nn.Conv2d(inp, oup, 1, 1, 0, { bias = false })
    end

    self.attn = Attention(inp, oup, image_size, heads, dim_head, dropout)
    self.ff = FeedForward(oup, hidden_dim, dropout)

    self.attn = nn.Sequential(
        Rearrange("b c ih iw -> b (ih iw) c"),
        PreNorm(inp, self.attn, nn.LayerNorm),
        -- Rearrange('b (ih iw) c -> b c ih iw', ih=self.ih, iw=self.iw)
        Rearrange("b (ih iw) c -> b c ih iw", { ih = self.ih, iw = self.iw })
    )

    self.ff = nn.Sequential(
        Rearrange("b c ih iw -> b (ih iw) c"),
        PreNorm(oup, self.ff, nn.LayerNorm),
        -- Rearrange('b (ih iw) c -> b c ih iw', ih=self.ih, iw=self.iw)
        Rearrange("b (ih iw) c -> b c ih iw", { ih = self.ih, iw = self.iw })
    )
end
function Transformer:forward(x)
    if self.downsample then
        x = self.proj(self.pool1(x)) + self.attn(self.pool2(x))
    else
        x = x + self.attn(x)
    end
    x = x + self.ff(x)
    return x
end

-- class CoAtNet(nn.Module):
local CoAtNet = nn.Module:extend("CoAtNet")
nn.signature(CoAtNet, "image_size, in_channels, num_blocks, channels, num_classes=1000, " ..
    "block_types=['C', 'C', 'T', 'T']")
function CoAtNet:init(image_size, in_channels, num_blocks, channels, num_classes, block_types)
    -- ih, iw = image_size
    local ih, iw = image_size[1], image_size[2]
    -- block = {'C': MBConv, 'T': Transformer}
    local block = { C = MBConv, T = Transformer }
    -- (ih // 2 ...: Lua 5.1 has no //)
    local function fd(a, b) return math.floor(a / b) end

    -- self.s0 = self._make_layer(
    --     conv_3x3_bn, in_channels, channels[0], num_blocks[0], (ih // 2, iw // 2))
    self.s0 = self:_make_layer(
        conv_3x3_bn, in_channels, channels[1], num_blocks[1], { fd(ih, 2), fd(iw, 2) })
    -- self.s1 = self._make_layer(
    --     block[block_types[0]], channels[0], channels[1], num_blocks[1], (ih // 4, iw // 4))
    self.s1 = self:_make_layer(
        block[block_types[1]], channels[1], channels[2], num_blocks[2], { fd(ih, 4), fd(iw, 4) })
    self.s2 = self:_make_layer(
        block[block_types[2]], channels[2], channels[3], num_blocks[3], { fd(ih, 8), fd(iw, 8) })
    self.s3 = self:_make_layer(
        block[block_types[3]], channels[3], channels[4], num_blocks[4], { fd(ih, 16), fd(iw, 16) })
    self.s4 = self:_make_layer(
        block[block_types[4]], channels[4], channels[5], num_blocks[5], { fd(ih, 32), fd(iw, 32) })

    -- self.pool = nn.AvgPool2d(ih // 32, 1)
    self.pool = nn.AvgPool2d(fd(ih, 32), 1)
    -- self.fc = nn.Linear(channels[-1], num_classes, bias=False)
    self.fc = nn.Linear(channels[#channels], num_classes, { bias = false })
end
function CoAtNet:forward(x)
    x = self.s0(x)
    x = self.s1(x)
    x = self.s2(x)
    x = self.s3(x)
    x = self.s4(x)

    -- x = self.pool(x).view(-1, x.shape[1])
    x = self.pool(x):view(-1, x.shape[2])
    x = self.fc(x)
    return x
end
-- def _make_layer(self, block, inp, oup, depth, image_size):
function CoAtNet:_make_layer(block, inp, oup, depth, image_size) -- luacheck: ignore self
    -- layers = nn.ModuleList([])
    local layers = nn.ModuleList({})
    -- for i in range(depth):
    for i = 0, depth - 1 do
        if i == 0 then
            -- layers.append(block(inp, oup, image_size, downsample=True))
            layers:append(block(inp, oup, image_size, { downsample = true }))
        else
            layers:append(block(oup, oup, image_size))
        end
    end
    -- return nn.Sequential(*layers)
    return nn.Sequential(unpack(layers))
end

-- def coatnet_0(): (its pattern at tiny sizes)
local function coatnet_tiny()
    -- num_blocks = [2, 2, 3, 5, 2]            # L
    local num_blocks = { 1, 1, 1, 1, 1 }
    -- channels = [64, 96, 192, 384, 768]      # D
    local channels = { 4, 8, 8, 16, 16 }
    -- return CoAtNet((224, 224), 3, num_blocks, channels, num_classes=1000)
    return CoAtNet({ 32, 32 }, 3, num_blocks, channels, { num_classes = 3 })
end

-- def count_parameters(model):
local function count_parameters(model)
    -- return sum(p.numel() for p in model.parameters() if p.requires_grad)
    local n = 0
    for _, p in ipairs(model:parameters()) do
        if p.requires_grad then n = n + p:numel() end
    end
    return n
end

-- every parameter, in named_parameters order (k = 0, 1, ...), set from a fixed formula:
-- p.copy_((0.3 * torch.sin(0.731 * torch.arange(p.numel()).float() + 1.37 * k)).view(p.shape))
local function fill_from_formula(model)
    tide.no_grad(function()
        for k, np in ipairs(model:named_parameters()) do
            local p = np[2]
            local v = (tide.arange(p:numel()):float() * 0.731 + 1.37 * (k - 1)):sin() * 0.3
            p:copy_(v:view(p.shape))
        end
    end)
end

-- x = torch.sin(0.37 * torch.arange(2 * 3 * 32 * 32).float() + 0.5).view(2, 3, 32, 32)
local function image()
    return (tide.arange(2 * 3 * 32 * 32):float() * 0.37 + 0.5):sin():view(2, 3, 32, 32)
end

describe("chinhsuanwu/coatnet-pytorch coatnet.py", function()
    it("builds Attention's relative_index buffer as PyTorch's (plus one)", function()
        local a = Attention(8, 16, { 2, 3 }, { heads = 2 })
        assert.equal("int64", a.relative_index.dtype)
        assert.same({ 36, 1 }, a.relative_index.shape)
        assert.same(REF.relidx, (a.relative_index - 1):flatten():tolist())
        assert.same({ 15, 2 }, a.relative_bias_table.shape)
        -- the buffer is a buffer (state_dict), the table a parameter
        local names = {}
        for _, np in ipairs(a:named_parameters()) do names[#names + 1] = np[1] end
        assert.equal("relative_bias_table", names[1])
        assert.is_not_nil(a:state_dict()["relative_index"])
    end)

    it("runs one Attention as PyTorch's (relative bias gathered per head)", function()
        local a = Attention(8, 16, { 2, 3 }, { heads = 2 })
        fill_from_formula(a)
        -- xa = torch.sin(0.29 * torch.arange(2 * 6 * 8).float() + 0.1).view(2, 6, 8)
        local xa = (tide.arange(2 * 6 * 8):float() * 0.29 + 0.1):sin():view(2, 6, 8)
        local oa = a(xa)
        assert.same(REF.attn[1], oa.shape)
        assert_close_list({ REF.attn[2], REF.attn[3] },
            { oa:sum():item(), oa:abs():sum():item() }, 1e-4, "attn sums")
        local f = oa:flatten():tolist()
        assert_close_list(REF.attn[4], { f[1], f[2], f[3], f[4] }, 1e-4, "attn")
    end)

    it("builds coatnet_0's pattern at tiny sizes: parameters, logits, 2 AdamW steps", function()
        local net = coatnet_tiny()
        local nps = net:named_parameters()
        assert.equal(REF.n_params, #nps)
        for i, name in ipairs(REF.first_names) do
            -- PyTorch's Sequential names its layers "0", "1", ...; tide's "1", "2", ...
            local want = name:gsub("%.(%d+)", function(d) return "." .. (tonumber(d) + 1) end)
            assert.equal(want, nps[i][1])
        end
        assert.equal(REF.count, count_parameters(net))
        assert.same(REF.relidx_s3, (net.s3[1].attn[2].fn.relative_index - 1):flatten():tolist())

        fill_from_formula(net)
        net:eval()
        local x = image()
        local logits = net(x)
        assert.same({ 2, 3 }, logits.shape)
        assert_close_list(REF.logits, logits:flatten():tolist(), 1e-4, "logits")

        net:train()
        local opt = tide.optim.AdamW(net:parameters(), { lr = 1e-2 })
        -- y = torch.tensor([0, 2])
        local y = tide.tensor({ 1, 3 }, { dtype = "int64" })
        local losses = {}
        for s = 1, 3 do
            opt:zero_grad()
            local loss = F.cross_entropy(net(x), y)
            losses[s] = loss:item()
            assert_finite(losses[s], "loss")
            if s < 3 then
                loss:backward()
                opt:step()
            end
        end
        assert.is_true(losses[3] < losses[2] and losses[2] < losses[1])
        assert_close_list(REF.loss, losses, 1e-4, "loss")
    end)
end)
