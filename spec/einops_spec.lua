-- einops_spec.lua — tide.einops (einops' rearrange / reduce / repeat_ and the layers Rearrange /
-- Reduce, in pure Lua over reshape/permute/expand/reductions) checked against plain torch
-- reshapes/permutes computed with PyTorch 1.13 (einops itself is not installed there: each
-- pattern's torch equivalent is written by hand beside it), its errors, pattern cache and
-- gradients; then lucidrains' vit-pytorch vit_pytorch/simple_vit.py (posemb_sincos_2d,
-- FeedForward, Attention, Transformer, SimpleViT with the Rearrange patch embedding) ported
-- line for line on tiny sizes, a few training steps. The Python line stands above each Lua line
-- that differs from it. Dims are 1-based; einops' keyword sizes are a trailing table.
local tide = require("tide")
local nn = tide.nn
local unpack = table.unpack or unpack -- luacheck: ignore
local einops = tide.einops
local rearrange, reduce, repeat_ = einops.rearrange, einops.reduce, einops.repeat_
local Rearrange, Reduce = einops.layers.Rearrange, einops.layers.Reduce

-- x = torch.arange(prod(shape), dtype=torch.float64).reshape(shape)
local function A(...)
    local shape, n = { ... }, 1
    for _, s in ipairs(shape) do
        n = n * s
    end
    return tide.arange(n, { dtype = tide.float64 }):reshape(shape)
end

-- the shape and (y.reshape(-1) * torch.arange(y.numel())).sum(): checks every element's place
local function check(y, shape, sum, msg)
    assert.are.same(shape, { unpack(y.shape) }, msg)
    local w = tide.arange(y:numel(), { dtype = tide.float64 })
    local got = (y:reshape(-1):double() * w):sum():item()
    assert(math.abs(got - sum) <= 1e-9 * math.max(1, math.abs(sum)),
        ("%s: checksum %.10g, PyTorch %.10g"):format(msg, got, sum))
end

-- an error that starts with "tide: " and names every string in `want`
local function fails_with(fn, want)
    local ok, err = pcall(fn)
    assert.is_false(ok, "expected an error naming " .. table.concat(want, ", "))
    err = tostring(err)
    assert.truthy(err:find("tide: ", 1, true), err)
    for _, w in ipairs(want) do
        assert.truthy(err:find(w, 1, true), ("%q does not name %q"):format(err, w))
    end
    return err
end

describe("tide.einops: rearrange", function()
    it("permutes, composes, decomposes, ellipsis and unit axes as torch reshape/permute", function()
        local x = A(2, 3, 4, 5)
        -- x.permute(0, 2, 3, 1)
        check(rearrange(x, "b c h w -> b h w c"), { 2, 4, 5, 3 }, 546400, "perm")
        -- x.reshape(2, 60)
        check(rearrange(x, "b c h w -> b (c h w)"), { 2, 60 }, 568820, "flat")
        -- x6.reshape(2,3,2,2,2,3).permute(0,2,4,3,5,1).reshape(2,4,18)
        check(rearrange(A(2, 3, 4, 6), "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", { p1 = 2, p2 = 3 }),
            { 2, 4, 18 }, 944820, "patch")
        -- A(2,3,8).reshape(2,3,2,4).permute(0,2,1,3)
        check(rearrange(A(2, 3, 8), "b n (h d) -> b h n d", { h = 2 }), { 2, 2, 3, 4 }, 35080, "heads")
        -- A(2,3,4).reshape(2,12)
        check(rearrange(A(2, 3, 4), "b ... -> b (...)"), { 2, 12 }, 4324, "ellipsis flat")
        -- x.transpose(-1, -2)
        check(rearrange(x, "... h w -> ... w h"), { 2, 3, 5, 4 }, 566540, "ellipsis transpose")
        -- A(2,1,4).reshape(2,4); A(2,4).reshape(2,1,4,1)
        check(rearrange(A(2, 1, 4), "b 1 h -> b h"), { 2, 4 }, 140, "unit in")
        check(rearrange(A(2, 4), "b h -> b () h 1"), { 2, 1, 4, 1 }, 140, "unit out")
        -- A(4,2,3,1).reshape(2,2,2,3,1).permute(0,2,1,3,4).reshape(4,6,1)
        check(rearrange(A(4, 2, 3, 1), "(b1 b2) h w c -> (b1 h) (b2 w) c", { b1 = 2 }), { 4, 6, 1 }, 4270,
            "grid")
        -- the identity pattern returns the input itself
        assert.are.equal(x, rearrange(x, "b c h w -> b c h w"))
    end)

    it("a list of tensors is stacked on a new first dim, as einops does", function()
        local a, b, c = A(2, 3), A(2, 3) + 10, A(2, 3) + 20
        -- torch.stack([a, b, c]).permute(1, 0, 2).reshape(2, 9)
        check(rearrange({ a, b, c }, "n h w -> h (n w)"), { 2, 9 }, 2406, "stack")
    end)

    it("gradients flow through rearrange, reduce and repeat_", function()
        local x = A(2, 3, 4):requires_grad_()
        local y = rearrange(x, "b c (h d) -> b (d c) h", { d = 2 })
        local z = reduce(y, "b k h -> k", "sum")
        local w = repeat_(z, "k -> k r", { r = 3 })
        ;(w * A(6, 3)):sum():backward()
        -- PyTorch: y = x.reshape(2,3,2,2).permute(0,3,1,2).reshape(2,6,2); z = y.sum((0,2));
        -- (z[:, None].expand(6,3) * A(6,3)).sum().backward()
        assert.are.same({ 2, 3, 4 }, { unpack(x.grad.shape) })
        check(x.grad, { 2, 3, 4 }, 7776, "grad")
    end)
end)

describe("tide.einops: reduce and repeat_", function()
    it("reduce by mean, sum, max, min, prod and over ...", function()
        local x, x6 = A(2, 3, 4, 5), A(2, 3, 4, 6)
        -- x6.reshape(2,3,2,2,3,2).amax(dim=(3,5))
        check(reduce(x6, "b c (h h2) (w w2) -> b c h w", "max", { h2 = 2, w2 = 2 }), { 2, 3, 2, 3 }, 62742,
            "max pool")
        -- x.mean((2, 3))
        check(reduce(x, "b c h w -> b c", "mean"), { 2, 3 }, 1242.5, "global average pool")
        check(reduce(x, "b c ... -> b c", "mean"), { 2, 3 }, 1242.5, "mean over ...")
        -- x.sum((0, 2, 3))
        check(reduce(x, "b c h w -> c", "sum"), { 3 }, 8740, "sum")
        -- reduce(x6, 'b c (h 2) (w 2) -> b c h w', 'max'): anonymous axes on the left are reduced
        check(reduce(x6, "b c (h 2) (w 2) -> b c h w", "max"), { 2, 3, 2, 3 }, 62742, "anonymous max pool")
        -- (A(3,4)/10+1).prod(0)
        check(reduce(A(3, 4) / 10 + 1, "b c -> c", "prod"), { 4 }, 24.738, "prod")
        -- A(2,3,4).amin(1)
        check(reduce(A(2, 3, 4), "b c h -> b h", "min"), { 2, 4 }, 316, "min")
        -- einops' reduction= by name, and a function(x, dims)
        check(reduce(A(2, 3, 4), "b c h -> b h", { reduction = "min" }), { 2, 4 }, 316, "reduction=")
        check(reduce(x, "b c h w -> c", function(t, dims) return t:sum({ dim = dims }) end), { 3 }, 8740,
            "callable")
    end)

    it("repeat_ adds named and anonymous axes; einops['repeat'] is the same function", function()
        assert.are.equal(einops.repeat_, einops["repeat"])
        -- A(2,3)[:, :, None].expand(2, 3, 3)
        check(repeat_(A(2, 3), "h w -> h w c", { c = 3 }), { 2, 3, 3 }, 540, "new axis")
        -- A(2,3)[:, None, :].expand(2, 2, 3).reshape(4, 3)  (repeat_interleave)
        check(repeat_(A(2, 3), "h w -> (h 2) w"), { 4, 3 }, 227, "interleave")
        -- A(2,3).repeat(2, 1)
        check(repeat_(A(2, 3), "h w -> (2 h) w"), { 4, 3 }, 200, "tile")
        check(einops["repeat"](A(2, 3), "b n -> b r n", { r = 2 }), { 2, 2, 3 }, 227, "middle")
        -- A(2,3)[:, None, :].expand(2, 4, 3).reshape(2, 12)
        check(repeat_(A(2, 3), "b ... -> b (r ...)", { r = 4 }), { 2, 12 }, 922, "with ...")
    end)
end)

describe("tide.einops: errors name the pattern, the axis and the fix; x stays unchanged", function()
    it("parse, one-side axes, sizes, rank", function()
        local x = A(2, 3, 4)
        local before = x:clone()
        fails_with(function() rearrange(x, "b c h") end, { "b c h", "->" })
        fails_with(function() rearrange(x, "b (c h -> b c h") end, { "not closed" })
        fails_with(function() rearrange(x, "b c) h -> b c h") end, { "closes no" })
        fails_with(function() rearrange(x, "b ((c) h) -> b c h") end, { "nested" })
        fails_with(function() rearrange(x, "b c c -> b c") end, { "axis c appears twice" })
        fails_with(function() rearrange(x, "b c h -> b c$h") end, { "unexpected character '$'" })
        fails_with(function() rearrange(x, "b c h -> b h") end,
            { 'einops.rearrange(x, "b c h -> b h")', "axis c is on the left side only", "einops.reduce" })
        fails_with(function() rearrange(x, "b c h -> b c h d") end,
            { "axis d is on the right side only", "einops.repeat_" })
        fails_with(function() rearrange(x, "b c h w -> b c h w") end,
            { "the input is 3-D but the left side names 4 dims" })
        fails_with(function() rearrange(A(2), "b c ... -> b c ...") end, { "at least 2 dims" })
        fails_with(function() rearrange(x, "b c (h d) -> b c h d", { d = 3 }) end,
            { "axis group (h d) has length 4", "do not divide" })
        fails_with(function() rearrange(x, "b c (h d) -> b c h d") end,
            { "cannot infer the sizes of h and d in (h d)" })
        fails_with(function() rearrange(x, "b c (h d) -> b c h d", { h = 2, d = 3 }) end,
            { "(h d) has length 4", "multiply to 6" })
        fails_with(function() rearrange(x, "b c h -> b c h", { h = 5 }) end,
            { "axis h has length 4", "h = 5" })
        fails_with(function() rearrange(x, "b c h -> b c h", { k = 2 }) end, { "k = 2 names no axis" })
        fails_with(function() rearrange(x, "b c h -> b c h", { h = 2.5 }) end, { "h = 2.5", "positive integer" })
        fails_with(function() rearrange(x, "b 1 h -> b h") end, { "dim 2 has length 3", "unit axis" })
        fails_with(function() rearrange(x, "(b ...) c h -> b c h") end, { "... inside parentheses" })
        fails_with(function() rearrange(x, "b c h -> b c h ...") end, { "... is on the right side only" })
        fails_with(function() rearrange(x, "b c h -> b c (h 2)") end, { "anonymous axis 2 on the right" })
        fails_with(function() rearrange(x, "b c (h 2) -> b c h") end, { "anonymous axis 2 on the left" })
        fails_with(function() repeat_(x, "b c (h 2) -> b c h") end, { "anonymous axis 2 on the left" })
        fails_with(function() reduce(x, "b c h -> b c", "median") end, { '"median"', '"mean"' })
        fails_with(function() reduce(x, "b c h -> b c d", "sum") end, { "axis d is on the right side only" })
        fails_with(function() repeat_(x, "b c h -> b c h r") end, { "new axis r", "{r = 3}" })
        fails_with(function() repeat_(x, "b c h -> b c") end, { "axis h is on the left side only" })
        fails_with(function() rearrange({}, "b c -> c b") end, { "empty list" })
        fails_with(function() rearrange(42, "b c -> c b") end, { "expected a tensor" })
        assert.is_true(tide.equal(before, x))
    end)
end)

describe("tide.einops: cache and layers", function()
    it("parses a pattern once and plans once per (rank, sizes, shape)", function()
        local x = A(2, 3, 8)
        rearrange(x, "b n (h d) -> b h n d", { h = 4 })
        local s = einops._stats
        local parses, recipes, plans = s.parses, s.recipes, s.plans
        for _ = 1, 3 do
            rearrange(x, "b n (h d) -> b h n d", { h = 4 })
        end
        assert.are.same({ parses, recipes, plans }, { s.parses, s.recipes, s.plans })
        rearrange(A(2, 5, 8), "b n (h d) -> b h n d", { h = 4 }) -- a new shape: a new plan only
        assert.are.same({ parses, recipes, plans + 1 }, { s.parses, s.recipes, s.plans })
        rearrange(x, "b n (h d) -> b h n d", { h = 8 }) -- new sizes: a new recipe
        assert.are.same({ parses, recipes + 1 }, { s.parses, s.recipes })
    end)

    it("Rearrange and Reduce are nn.Modules usable in nn.Sequential", function()
        -- nn.Sequential(Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=2, p2=2), ...)
        local m = nn.Sequential(
            Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", { p1 = 2, p2 = 2 }),
            Reduce("b n d -> b d", "mean"),
            Reduce("b (d d2) -> b d", "max", { d2 = 2 })
        )
        assert.is_true(tide.isinstance(m[1], nn.Module))
        local y = m(A(2, 3, 4, 6))
        -- A(2,3,4,6).reshape(2,3,2,2,3,2).permute(0,2,4,3,5,1).reshape(2,6,12).mean(1).reshape(2,6,2).amax(2)
        check(y, { 2, 6 }, 7214, "layers")
        assert.truthy(tostring(m):find('Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2)', 1, true))
        fails_with(function() Rearrange("b c -> b") end, { "axis c is on the left side only" })
        fails_with(function() Reduce("b c -> b", "avg") end, { '"avg"' })
    end)
end)

describe("tide.einops: the forms vit-pytorch uses, pack/unpack and einsum", function()
    it("cls tokens, masks, ellipsis placements, reduce with a split", function()
        -- repeat(self.cls_token, '() n d -> b n d', b = b)  == A(1,1,4).expand(3,1,4)
        check(repeat_(A(1, 1, 4), "() n d -> b n d", { b = 3 }), { 3, 1, 4 }, 114, "cls")
        check(repeat_(A(1, 1, 4), "1 1 d -> b 1 d", { b = 3 }), { 3, 1, 4 }, 114, "cls 1 1 d")
        -- rearrange(mask, 'b j -> b 1 1 j') == A(2,5).reshape(2,1,1,5)
        check(rearrange(A(2, 5), "b j -> b 1 1 j"), { 2, 1, 1, 5 }, 285, "mask")
        -- rearrange(x, 'b (h w) c -> b c h w', h = 2) == A(2,6,4).reshape(2,2,3,4).permute(0,3,1,2)
        check(rearrange(A(2, 6, 4), "b (h w) c -> b c h w", { h = 2 }), { 2, 4, 2, 3 }, 34340, "bhwc")
        -- rearrange(grid, 'j ... -> 1 j ...') == A(2,3,4)[None]
        check(rearrange(A(2, 3, 4), "j ... -> 1 j ..."), { 1, 2, 3, 4 }, 4324, "grid")
        -- Rearrange('b ... h -> b h ... 1') == A(2,3,4,5).permute(0,3,1,2)[..., None]
        check(Rearrange("b ... h -> b h ... 1")(A(2, 3, 4, 5)), { 2, 5, 3, 4, 1 }, 542860, "b h ... 1")
        -- reduce(mask, 'b (f patch) -> b f', 'sum', patch = 2) == A(2,6).reshape(2,3,2).sum(2)
        check(reduce(A(2, 6), "b (f patch) -> b f", "sum", { patch = 2 }), { 2, 3 }, 235, "reduce split")
    end)

    it("pack and unpack", function()
        local cls, x = A(2, 4), A(2, 3, 3, 4) + 100
        -- x, ps = pack([cls, x], 'b * d')
        --   == torch.cat([cls[:, None, :], x.reshape(2, 9, 4)], 1), ps == [(), (3, 3)]
        local packed, ps = einops.pack({ cls, x }, "b * d")
        check(packed, { 2, 10, 4 }, 439496, "pack")
        assert.are.same({ {}, { 3, 3 } }, ps)
        -- cls, x = unpack(x, ps, 'b * d')
        local cls2, x2 = unpack(einops.unpack(packed, ps, "b * d"))
        assert.is_true(tide.equal(cls, cls2))
        assert.is_true(tide.equal(x, x2))
        local _, x3 = unpack(einops.unpack(packed, { {}, { 3, -1 } }, "b * d"))
        assert.is_true(tide.equal(x, x3))
        fails_with(function() einops.pack({ cls, x }, "b d") end, { 'einops.pack(x, "b d")', "no *" })
        fails_with(function() einops.pack({ cls, x }, "b * d e") end, { "tensor 1 is 2-D", "at least 3" })
        fails_with(function() einops.unpack(packed, { {}, { 3, 2 } }, "b * d") end,
            { "dim 2 has length 10", "hold 7" })
    end)

    it("einsum with multi-letter axis names, pattern last", function()
        local q, k = A(2, 3, 4), A(2, 5, 4) / 7
        -- einsum(q, k, 'b i d, b j d -> b i j') == torch.einsum('bid,bjd->bij', q, k)
        check(einops.einsum(q, k, "batch i dim, batch j dim -> batch i j"), { 2, 3, 5 }, 106830, "einsum")
        check(einops.einsum("b i d, b j d -> b i j", q, k), { 2, 3, 5 }, 106830, "einsum pattern first")
        fails_with(function() einops.einsum(q, k, "b i d, b j d") end, { "->" })
    end)

    it("parse_shape", function()
        -- parse_shape(x, 'b _ h w') == {'b': 2, 'h': 4, 'w': 5}
        assert.are.same({ b = 2, h = 4, w = 5 }, einops.parse_shape(A(2, 3, 4, 5), "b _ h w"))
        fails_with(function() einops.parse_shape(A(2, 3), "b c h") end, { "2-D", "3 dims" })
    end)
end)

---------------------------------------------------------------------------------------------
-- lucidrains/vit-pytorch vit_pytorch/simple_vit.py
---------------------------------------------------------------------------------------------
describe("vit-pytorch simple_vit.py", function()
    -- helpers

    -- Python's map(f, xs), as a list
    local function map(f, xs)
        local out = {}
        for i, t in ipairs(xs) do
            out[i] = f(t)
        end
        return out
    end

    -- def pair(t): return t if isinstance(t, tuple) else (t, t)
    local function pair(t)
        if type(t) == "table" then
            return t[1], t[2]
        end
        return t, t
    end

    -- def posemb_sincos_2d(h, w, dim, temperature: int = 10000, dtype = torch.float32):
    local function posemb_sincos_2d(h, w, dim, temperature, dtype)
        temperature, dtype = temperature or 10000, dtype or tide.float32
        -- y, x = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
        local y, x = unpack(tide.meshgrid(tide.arange(h), tide.arange(w), { indexing = "ij" }))
        -- assert (dim % 4) == 0, "feature dimension must be multiple of 4 for sincos emb"
        assert((dim % 4) == 0, "feature dimension must be multiple of 4 for sincos emb")
        -- omega = torch.arange(dim // 4) / (dim // 4 - 1)
        local omega = tide.arange(math.floor(dim / 4)) / (math.floor(dim / 4) - 1)
        -- omega = 1.0 / (temperature ** omega)
        omega = 1.0 / (temperature ^ omega)

        -- y = y.flatten()[:, None] * omega[None, :]
        y = y:flatten()[{ {}, tide.newaxis }] * omega[{ tide.newaxis, {} }]
        x = x:flatten()[{ {}, tide.newaxis }] * omega[{ tide.newaxis, {} }]
        -- pe = torch.cat((x.sin(), x.cos(), y.sin(), y.cos()), dim=1)
        local pe = tide.cat({ x:sin(), x:cos(), y:sin(), y:cos() }, { dim = 2 })
        return pe:type(dtype)
    end

    -- classes

    local FeedForward = nn.Module:extend("FeedForward")
    function FeedForward:init(dim, hidden_dim)
        self.net = nn.Sequential(
            nn.LayerNorm(dim),
            nn.Linear(dim, hidden_dim),
            nn.GELU(),
            nn.Linear(hidden_dim, dim)
        )
    end

    function FeedForward:forward(x)
        return self.net(x)
    end

    local Attention = nn.Module:extend("Attention")
    -- def __init__(self, dim, heads = 8, dim_head = 64):
    function Attention:init(dim, opts)
        local heads, dim_head = opts and opts.heads or 8, opts and opts.dim_head or 64
        local inner_dim = dim_head * heads
        self.heads = heads
        self.scale = dim_head ^ -0.5
        self.norm = nn.LayerNorm(dim)

        self.attend = nn.Softmax({ dim = -1 })

        self.to_qkv = nn.Linear(dim, inner_dim * 3, { bias = false })
        self.to_out = nn.Linear(inner_dim, dim, { bias = false })
    end

    function Attention:forward(x)
        x = self.norm(x)

        -- qkv = self.to_qkv(x).chunk(3, dim = -1)
        local qkv = self.to_qkv(x):chunk(3, { dim = -1 })
        -- q, k, v = map(lambda t: rearrange(t, 'b n (h d) -> b h n d', h = self.heads), qkv)
        local q, k, v = unpack(map(function(t)
            return rearrange(t, "b n (h d) -> b h n d", { h = self.heads })
        end, qkv))

        -- dots = torch.matmul(q, k.transpose(-1, -2)) * self.scale
        local dots = tide.matmul(q, k:transpose(-1, -2)) * self.scale

        local attn = self.attend(dots)

        local out = tide.matmul(attn, v)
        out = rearrange(out, "b h n d -> b n (h d)")
        return self.to_out(out)
    end

    local Transformer = nn.Module:extend("Transformer")
    function Transformer:init(dim, depth, heads, dim_head, mlp_dim)
        self.norm = nn.LayerNorm(dim)
        self.layers = nn.ModuleList({})
        -- for _ in range(depth):
        for _ = 1, depth do
            self.layers:append(nn.ModuleList({
                Attention(dim, { heads = heads, dim_head = dim_head }),
                FeedForward(dim, mlp_dim)
            }))
        end
    end

    function Transformer:forward(x)
        -- for attn, ff in self.layers:
        for _, l in ipairs(self.layers) do
            local attn, ff = unpack(l)
            x = attn(x) + x
            x = ff(x) + x
        end
        return self.norm(x)
    end

    local SimpleViT = nn.Module:extend("SimpleViT")
    -- def __init__(self, *, image_size, patch_size, num_classes, dim, depth, heads, mlp_dim, channels = 3, dim_head = 64):
    function SimpleViT:init(o)
        local image_size, patch_size, num_classes, dim, depth, heads, mlp_dim = o.image_size, o.patch_size,
            o.num_classes, o.dim, o.depth, o.heads, o.mlp_dim
        local channels, dim_head = o.channels or 3, o.dim_head or 64
        local image_height, image_width = pair(image_size)
        -- self.patch_size = patch_height, patch_width = pair(patch_size)
        local patch_height, patch_width = pair(patch_size)
        self.patch_size = { patch_height, patch_width }

        assert(image_height % patch_height == 0 and image_width % patch_width == 0,
            "Image dimensions must be divisible by the patch size.")

        local patch_dim = channels * patch_height * patch_width

        self.to_patch_embedding = nn.Sequential(
            -- Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1 = patch_height, p2 = patch_width),
            Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", { p1 = patch_height, p2 = patch_width }),
            nn.LayerNorm(patch_dim),
            nn.Linear(patch_dim, dim),
            nn.LayerNorm(dim)
        )

        -- self.pos_embedding = posemb_sincos_2d(h = image_height // patch_height, w = ..., dim = dim)
        self.pos_embedding = posemb_sincos_2d(
            math.floor(image_height / patch_height),
            math.floor(image_width / patch_width),
            dim
        )

        self.transformer = Transformer(dim, depth, heads, dim_head, mlp_dim)

        self.pool = "mean"
        self.to_latent = nn.Identity()

        self.linear_head = nn.Linear(dim, num_classes)
    end

    function SimpleViT:forward(img)
        local device = img.device

        local x = self.to_patch_embedding(img)
        -- x += self.pos_embedding.to(device, dtype=x.dtype)
        x = x + self.pos_embedding:to(device, { dtype = x.dtype })

        x = self.transformer(x)
        -- x = x.mean(dim = 1)
        x = x:mean({ dim = 2 })

        x = self.to_latent(x)
        return self.linear_head(x)
    end

    it("posemb_sincos_2d matches PyTorch", function()
        local pe = posemb_sincos_2d(2, 3, 8)
        -- PyTorch: torch.Size([6, 8]); pe[4] = [sin 1, sin 1e-4, cos 1, cos 1e-4, sin 1, ...];
        -- (pe.reshape(-1).double() * torch.arange(48)).sum() = 605.8842148243784
        assert.are.same({ 6, 8 }, { unpack(pe.shape) })
        assert.are.equal(tide.float32, pe.dtype)
        assert(math.abs(pe[5][1]:item() - 0.8414709568023682) < 1e-6)
        assert(math.abs(pe[5][2]:item() - 9.999999747378752e-05) < 1e-9)
        local w = tide.arange(48, { dtype = tide.float64 })
        assert(math.abs((pe:reshape(-1):double() * w):sum():item() - 605.8842148243784) < 1e-3)
    end)

    it("SimpleViT with the Rearrange patch embedding trains a few steps", function()
        tide.manual_seed(0)
        -- v = SimpleViT(image_size = 256, patch_size = 32, num_classes = 1000, dim = 1024, depth = 6,
        --               heads = 16, mlp_dim = 2048)   (shrunk)
        local v = SimpleViT({ image_size = 8, patch_size = 4, num_classes = 5, dim = 16, depth = 2,
            heads = 2, mlp_dim = 32, dim_head = 8 })
        -- img = torch.randn(1, 3, 256, 256); preds = v(img) # (1, 1000)
        local img = tide.randn(4, 3, 8, 8)
        local labels = tide.tensor({ 1, 2, 3, 4 })
        local preds = v(img)
        assert.are.same({ 4, 5 }, { unpack(preds.shape) })
        local opt = tide.optim.Adam(v:parameters(), { lr = 3e-3 })
        local first, last
        for _ = 1, 6 do
            opt:zero_grad()
            local loss = nn.functional.cross_entropy(v(img), labels)
            loss:backward()
            opt:step()
            first = first or loss:item()
            last = loss:item()
            assert(last == last and math.abs(last) < math.huge, "loss not finite")
        end
        assert(last < first, ("loss did not decrease: %g -> %g"):format(first, last))
        -- the patch embedding's Rearrange got gradients through to the LayerNorm behind it
        assert.truthy(v.to_patch_embedding[2].weight.grad)
    end)

    -- vit_pytorch/simple_vit_with_register_tokens.py: the same blocks, with register tokens
    -- packed beside the patches (einops pack/unpack) and unpacked after the transformer
    local SimpleViTReg = nn.Module:extend("SimpleViT")
    -- def __init__(self, *, image_size, patch_size, num_classes, dim, depth, heads, mlp_dim,
    --              num_register_tokens = 4, channels = 3, dim_head = 64):
    function SimpleViTReg:init(o)
        local image_size, patch_size, num_classes, dim, depth, heads, mlp_dim = o.image_size, o.patch_size,
            o.num_classes, o.dim, o.depth, o.heads, o.mlp_dim
        local num_register_tokens, channels, dim_head = o.num_register_tokens or 4, o.channels or 3,
            o.dim_head or 64
        local image_height, image_width = pair(image_size)
        local patch_height, patch_width = pair(patch_size)
        self.patch_size = { patch_height, patch_width }

        assert(image_height % patch_height == 0 and image_width % patch_width == 0,
            "Image dimensions must be divisible by the patch size.")

        local patch_dim = channels * patch_height * patch_width

        self.to_patch_embedding = nn.Sequential(
            Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", { p1 = patch_height, p2 = patch_width }),
            nn.LayerNorm(patch_dim),
            nn.Linear(patch_dim, dim),
            nn.LayerNorm(dim)
        )

        -- self.register_tokens = nn.Parameter(torch.randn(num_register_tokens, dim))
        self.register_tokens = nn.Parameter(tide.randn(num_register_tokens, dim))

        self.pos_embedding = posemb_sincos_2d(
            math.floor(image_height / patch_height),
            math.floor(image_width / patch_width),
            dim
        )

        self.transformer = Transformer(dim, depth, heads, dim_head, mlp_dim)

        self.pool = "mean"
        self.to_latent = nn.Identity()

        self.linear_head = nn.Linear(dim, num_classes)
    end

    function SimpleViTReg:forward(img)
        -- batch, device = img.shape[0], img.device
        local batch, device = img.shape[1], img.device

        local x = self.to_patch_embedding(img)
        x = x + self.pos_embedding:to(device, { dtype = x.dtype })

        -- r = repeat(self.register_tokens, 'n d -> b n d', b = batch)
        local r = repeat_(self.register_tokens, "n d -> b n d", { b = batch })

        -- x, ps = pack([x, r], 'b * d')
        local ps
        x, ps = einops.pack({ x, r }, "b * d")

        x = self.transformer(x)

        -- x, _ = unpack(x, ps, 'b * d')
        x = unpack(einops.unpack(x, ps, "b * d"))

        -- x = x.mean(dim = 1)
        x = x:mean({ dim = 2 })

        x = self.to_latent(x)
        return self.linear_head(x)
    end

    it("simple_vit_with_register_tokens.py: pack/unpack register tokens, a few training steps", function()
        tide.manual_seed(0)
        local v = SimpleViTReg({ image_size = 8, patch_size = 4, num_classes = 5, dim = 16, depth = 2,
            heads = 2, mlp_dim = 32, dim_head = 8, num_register_tokens = 3 })
        local img = tide.randn(4, 3, 8, 8)
        local labels = tide.tensor({ 1, 2, 3, 4 })
        local opt = tide.optim.Adam(v:parameters(), { lr = 3e-3 })
        local first, last
        for _ = 1, 6 do
            opt:zero_grad()
            local loss = nn.functional.cross_entropy(v(img), labels)
            loss:backward()
            opt:step()
            first = first or loss:item()
            last = loss:item()
            assert(last == last and math.abs(last) < math.huge, "loss not finite")
        end
        assert(last < first, ("loss did not decrease: %g -> %g"):format(first, last))
        -- the register tokens take part in attention, so they get gradients through pack
        assert.truthy(v.register_tokens.grad)
        assert(v.register_tokens.grad:abs():sum():item() > 0)
    end)
end)

---------------------------------------------------------------------------------------------
-- lucidrains/vit-pytorch vit_pytorch/vit.py (cls token by repeat '... d -> b ... d', learned
-- positions, dropout, pool 'cls' or 'mean': with 'mean' the cls token is a (0, dim) Parameter)
---------------------------------------------------------------------------------------------
describe("vit-pytorch vit.py", function()
    local Module, ModuleList = nn.Module, nn.ModuleList

    local function pair(t)
        if type(t) == "table" then
            return t[1], t[2]
        end
        return t, t
    end

    local function map(f, xs)
        local out = {}
        for i, t in ipairs(xs) do
            out[i] = f(t)
        end
        return out
    end

    local FeedForward = Module:extend("FeedForward")
    -- def __init__(self, dim, hidden_dim, dropout = 0.):
    function FeedForward:init(dim, hidden_dim, opts)
        local dropout = opts and opts.dropout or 0.
        self.net = nn.Sequential(
            nn.LayerNorm(dim),
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

    local Attention = Module:extend("Attention")
    -- def __init__(self, dim, heads = 8, dim_head = 64, dropout = 0.):
    function Attention:init(dim, opts)
        local heads, dim_head, dropout = opts.heads or 8, opts.dim_head or 64, opts.dropout or 0.
        local inner_dim = dim_head * heads
        local project_out = not (heads == 1 and dim_head == dim)

        self.heads = heads
        self.scale = dim_head ^ -0.5

        self.norm = nn.LayerNorm(dim)

        self.attend = nn.Softmax({ dim = -1 })
        self.dropout = nn.Dropout(dropout)

        self.to_qkv = nn.Linear(dim, inner_dim * 3, { bias = false })

        -- self.to_out = nn.Sequential(...) if project_out else nn.Identity()
        self.to_out = project_out and nn.Sequential(
            nn.Linear(inner_dim, dim),
            nn.Dropout(dropout)
        ) or nn.Identity()
    end

    function Attention:forward(x)
        x = self.norm(x)

        local qkv = self.to_qkv(x):chunk(3, { dim = -1 })
        local q, k, v = unpack(map(function(t)
            return rearrange(t, "b n (h d) -> b h n d", { h = self.heads })
        end, qkv))

        local dots = tide.matmul(q, k:transpose(-1, -2)) * self.scale

        local attn = self.attend(dots)
        attn = self.dropout(attn)

        local out = tide.matmul(attn, v)
        out = rearrange(out, "b h n d -> b n (h d)")
        return self.to_out(out)
    end

    local Transformer = Module:extend("Transformer")
    function Transformer:init(dim, depth, heads, dim_head, mlp_dim, dropout)
        dropout = dropout or 0.
        self.norm = nn.LayerNorm(dim)
        self.layers = ModuleList({})

        for _ = 1, depth do
            self.layers:append(ModuleList({
                Attention(dim, { heads = heads, dim_head = dim_head, dropout = dropout }),
                FeedForward(dim, mlp_dim, { dropout = dropout })
            }))
        end
    end

    function Transformer:forward(x)
        -- for attn, ff in self.layers:
        for _, l in ipairs(self.layers) do
            local attn, ff = unpack(l)
            x = attn(x) + x
            x = ff(x) + x
        end

        return self.norm(x)
    end

    local ViT = Module:extend("ViT")
    -- def __init__(self, *, image_size, patch_size, num_classes, dim, depth, heads, mlp_dim, pool = 'cls',
    --              channels = 3, dim_head = 64, dropout = 0., emb_dropout = 0.):
    function ViT:init(o)
        local image_size, patch_size, num_classes, dim, depth, heads, mlp_dim = o.image_size, o.patch_size,
            o.num_classes, o.dim, o.depth, o.heads, o.mlp_dim
        local pool, channels, dim_head = o.pool or "cls", o.channels or 3, o.dim_head or 64
        local dropout, emb_dropout = o.dropout or 0., o.emb_dropout or 0.
        local image_height, image_width = pair(image_size)
        local patch_height, patch_width = pair(patch_size)
        self.patch_size = { patch_height, patch_width }

        assert(image_height % patch_height == 0 and image_width % patch_width == 0,
            "Image dimensions must be divisible by the patch size.")

        -- num_patches = (image_height // patch_height) * (image_width // patch_width)
        local num_patches = math.floor(image_height / patch_height) * math.floor(image_width / patch_width)
        local patch_dim = channels * patch_height * patch_width

        assert(pool == "cls" or pool == "mean", "pool type must be either cls (cls token) or mean (mean pooling)")
        local num_cls_tokens = pool == "cls" and 1 or 0

        self.to_patch_embedding = nn.Sequential(
            Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", { p1 = patch_height, p2 = patch_width }),
            nn.LayerNorm(patch_dim),
            nn.Linear(patch_dim, dim),
            nn.LayerNorm(dim)
        )

        self.cls_token = nn.Parameter(tide.randn(num_cls_tokens, dim))
        self.pos_embedding = nn.Parameter(tide.randn(num_patches + num_cls_tokens, dim))

        self.dropout = nn.Dropout(emb_dropout)

        self.transformer = Transformer(dim, depth, heads, dim_head, mlp_dim, dropout)

        self.pool = pool
        self.to_latent = nn.Identity()

        -- self.mlp_head = nn.Linear(dim, num_classes) if num_classes > 0 else None
        self.mlp_head = num_classes > 0 and nn.Linear(dim, num_classes) or nil
    end

    function ViT:forward(img)
        -- batch = img.shape[0]
        local batch = img.shape[1]
        local x = self.to_patch_embedding(img)

        -- cls_tokens = repeat(self.cls_token, '... d -> b ... d', b = batch)
        local cls_tokens = repeat_(self.cls_token, "... d -> b ... d", { b = batch })
        -- x = torch.cat((cls_tokens, x), dim = 1)
        x = tide.cat({ cls_tokens, x }, { dim = 2 })

        -- seq = x.shape[1]
        local seq = x.shape[2]

        -- x = x + self.pos_embedding[:seq]
        x = x + self.pos_embedding[{ { 1, seq } }]
        x = self.dropout(x)

        x = self.transformer(x)

        if self.mlp_head == nil then
            return x
        end

        -- x = x.mean(dim = 1) if self.pool == 'mean' else x[:, 0]
        if self.pool == "mean" then
            x = x:mean({ dim = 2 })
        else
            x = x[{ {}, 1 }]
        end

        x = self.to_latent(x)
        return self.mlp_head(x)
    end

    for _, pool in ipairs({ "cls", "mean" }) do
        it("ViT(pool = '" .. pool .. "') trains a few steps", function()
            tide.manual_seed(0)
            -- v = ViT(image_size = 256, patch_size = 32, num_classes = 1000, dim = 1024, depth = 6, heads = 16,
            --         mlp_dim = 2048, dropout = 0.1, emb_dropout = 0.1)   (shrunk)
            local v = ViT({ image_size = 8, patch_size = 4, num_classes = 5, dim = 16, depth = 2, heads = 2,
                mlp_dim = 32, dim_head = 8, dropout = 0.1, emb_dropout = 0.1, pool = pool })
            local img = tide.randn(4, 3, 8, 8)
            local labels = tide.tensor({ 1, 2, 3, 4 })
            assert.are.same({ 4, 5 }, { unpack(v(img).shape) })
            local opt = tide.optim.Adam(v:parameters(), { lr = 3e-3 })
            local losses = {}
            for i = 1, 6 do
                opt:zero_grad()
                local loss = nn.functional.cross_entropy(v(img), labels)
                loss:backward()
                opt:step()
                losses[i] = loss:item()
                assert(losses[i] == losses[i] and math.abs(losses[i]) < math.huge, "loss not finite")
            end
            v:eval()
            local final = nn.functional.cross_entropy(v(img), labels):item()
            assert(final < losses[1], ("loss did not decrease: %g -> %g"):format(losses[1], final))
            if pool == "cls" then
                assert.truthy(v.cls_token.grad)
            else
                -- the (0, dim) cls token: repeat_ gives (b, 0, dim) and the cat keeps only the patches
                assert.are.same({ 0, 16 }, { unpack(v.cls_token.shape) })
            end
        end)
    end
end)
