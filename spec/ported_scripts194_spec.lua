-- ported_scripts194_spec.lua — facebookresearch/ConvNeXt: models/convnext.py (Block with the 7x7
-- depthwise conv, the permute to channels_last, LayerNorm, pwconv1 / GELU / pwconv2 Linears, the
-- layer-scale gamma, the permute back, DropPath and the residual; ConvNeXt with its stem and
-- downsample layers, stages, final LayerNorm over the pooled features, head, _init_weights and
-- head_init_scale; the channels_first LayerNorm), with timm.models.layers' DropPath (timm 0.4.12,
-- as the file imports it) pasted in, ported line for line at tiny sizes (in_chans 3, dims
-- {8, 16, 24, 32}, depths {1, 1, 2, 1}, images 2 x 3 x 32 x 32, num_classes 5). The Python line
-- stands above each Lua line that differs from it. Dims and class targets are 1-based.
-- trunc_normal_ (timm's) is tide's nn.init.trunc_normal_ (the same a = -2, b = 2 defaults); the
-- value checks replace its draw by formula weights over each weight's index (FORMULA_INIT below,
-- the same formula in the PyTorch 1.13 reference script), with layer_scale_init_value 0.5 and
-- head_init_scale 0.25 so that the blocks' branches and the gradients are not ~1e-6. No GAP:
-- every call has tide's own spelling.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

-- from timm.models.layers import trunc_normal_, DropPath
-- (the value checks set trunc_normal_ to the formula below; the init test keeps tide's draw)
local trunc_normal_ = nn.init.trunc_normal_

---------------------------------------------------------------------------------------------
-- timm/models/layers/drop.py (timm 0.4.12): drop_path, DropPath
---------------------------------------------------------------------------------------------
-- def drop_path(x, drop_prob: float = 0., training: bool = False):
local function drop_path(x, drop_prob, training)
    drop_prob = drop_prob or 0.0
    -- if drop_prob == 0. or not training:
    if drop_prob == 0.0 or not training then
        return x
    end
    local keep_prob = 1 - drop_prob
    -- shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    local shape = { x:size(1) }
    for i = 2, x.ndim do shape[i] = 1 end
    -- random_tensor = keep_prob + torch.rand(shape, dtype=x.dtype, device=x.device)
    local random_tensor = keep_prob + tide.rand(shape, { dtype = x.dtype, device = x.device })
    random_tensor:floor_() -- binarize
    -- output = x.div(keep_prob) * random_tensor
    local output = x:div(keep_prob) * random_tensor
    return output
end

-- class DropPath(nn.Module):
local DropPath = nn.Module:extend("DropPath")
-- def __init__(self, drop_prob=None):
function DropPath:init(drop_prob)
    self.drop_prob = drop_prob
end

function DropPath:forward(x)
    return drop_path(x, self.drop_prob, self.training)
end

---------------------------------------------------------------------------------------------
-- models/convnext.py
---------------------------------------------------------------------------------------------
local LayerNorm -- defined below Block and ConvNeXt, as in the file

-- class Block(nn.Module):
local Block = nn.Module:extend("Block")
-- def __init__(self, dim, drop_path=0., layer_scale_init_value=1e-6):
function Block:init(dim, drop_path_, layer_scale_init_value)
    drop_path_ = drop_path_ or 0.0
    layer_scale_init_value = layer_scale_init_value or 1e-6
    -- self.dwconv = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim) # depthwise conv
    self.dwconv = nn.Conv2d(dim, dim, 7, { padding = 3, groups = dim })
    -- self.norm = LayerNorm(dim, eps=1e-6)
    self.norm = LayerNorm(dim, { eps = 1e-6 })
    self.pwconv1 = nn.Linear(dim, 4 * dim) -- pointwise/1x1 convs, implemented with linear layers
    self.act = nn.GELU()
    self.pwconv2 = nn.Linear(4 * dim, dim)
    -- self.gamma = nn.Parameter(layer_scale_init_value * torch.ones((dim)),
    --                             requires_grad=True) if layer_scale_init_value > 0 else None
    self.gamma = layer_scale_init_value > 0
        and nn.Parameter(layer_scale_init_value * tide.ones(dim), { requires_grad = true }) or nil
    -- self.drop_path = DropPath(drop_path) if drop_path > 0. else nn.Identity()
    self.drop_path = drop_path_ > 0.0 and DropPath(drop_path_) or nn.Identity()
end

function Block:forward(x)
    local input = x
    x = self.dwconv(x)
    -- x = x.permute(0, 2, 3, 1) # (N, C, H, W) -> (N, H, W, C)
    x = x:permute(1, 3, 4, 2)
    x = self.norm(x)
    x = self.pwconv1(x)
    x = self.act(x)
    x = self.pwconv2(x)
    -- if self.gamma is not None:
    if self.gamma ~= nil then
        x = self.gamma * x
    end
    -- x = x.permute(0, 3, 1, 2) # (N, H, W, C) -> (N, C, H, W)
    x = x:permute(1, 4, 2, 3)

    x = input + self.drop_path(x)
    return x
end

-- class ConvNeXt(nn.Module):
local ConvNeXt = nn.Module:extend("ConvNeXt")
-- def __init__(self, in_chans=3, num_classes=1000,
--              depths=[3, 3, 9, 3], dims=[96, 192, 384, 768], drop_path_rate=0.,
--              layer_scale_init_value=1e-6, head_init_scale=1.,
--              ):
function ConvNeXt:init(o)
    o = o or {}
    local in_chans, num_classes = o.in_chans or 3, o.num_classes or 1000
    local depths, dims = o.depths or { 3, 3, 9, 3 }, o.dims or { 96, 192, 384, 768 }
    local drop_path_rate = o.drop_path_rate or 0.0
    local layer_scale_init_value = o.layer_scale_init_value or 1e-6
    local head_init_scale = o.head_init_scale or 1.0

    -- stem and 3 intermediate downsampling conv layers
    self.downsample_layers = nn.ModuleList()
    local stem = nn.Sequential(
        -- nn.Conv2d(in_chans, dims[0], kernel_size=4, stride=4),
        nn.Conv2d(in_chans, dims[1], 4, { stride = 4 }),
        -- LayerNorm(dims[0], eps=1e-6, data_format="channels_first")
        LayerNorm(dims[1], { eps = 1e-6, data_format = "channels_first" })
    )
    self.downsample_layers:append(stem)
    -- for i in range(3):
    for i = 1, 3 do
        local downsample_layer = nn.Sequential(
            -- LayerNorm(dims[i], eps=1e-6, data_format="channels_first"),
            LayerNorm(dims[i], { eps = 1e-6, data_format = "channels_first" }),
            -- nn.Conv2d(dims[i], dims[i+1], kernel_size=2, stride=2),
            nn.Conv2d(dims[i], dims[i + 1], 2, { stride = 2 })
        )
        self.downsample_layers:append(downsample_layer)
    end

    -- 4 feature resolution stages, each consisting of multiple residual blocks
    self.stages = nn.ModuleList()
    -- dp_rates=[x.item() for x in torch.linspace(0, drop_path_rate, sum(depths))]
    local total = 0
    for _, d in ipairs(depths) do total = total + d end
    local dp_rates = {}
    for k, x in ipairs(tide.linspace(0, drop_path_rate, total):tolist()) do dp_rates[k] = x end
    local cur = 0
    -- for i in range(4):
    for i = 1, 4 do
        -- stage = nn.Sequential(
        --     *[Block(dim=dims[i], drop_path=dp_rates[cur + j],
        --     layer_scale_init_value=layer_scale_init_value) for j in range(depths[i])]
        -- )
        local blocks = {}
        for j = 1, depths[i] do
            blocks[j] = Block(dims[i], dp_rates[cur + j], layer_scale_init_value)
        end
        local stage = nn.Sequential(unpack(blocks))
        self.stages:append(stage)
        cur = cur + depths[i]
    end

    -- self.norm = nn.LayerNorm(dims[-1], eps=1e-6) # final norm layer
    self.norm = nn.LayerNorm(dims[#dims], { eps = 1e-6 })
    -- self.head = nn.Linear(dims[-1], num_classes)
    self.head = nn.Linear(dims[#dims], num_classes)

    -- self.apply(self._init_weights)
    self:apply(function(m) self:_init_weights(m) end)
    self.head.weight.data:mul_(head_init_scale)
    self.head.bias.data:mul_(head_init_scale)
end

function ConvNeXt:_init_weights(m)
    -- if isinstance(m, (nn.Conv2d, nn.Linear)):
    if tide.isinstance(m, { nn.Conv2d, nn.Linear }) then
        -- trunc_normal_(m.weight, std=.02)
        trunc_normal_(m.weight, { std = .02 })
        nn.init.constant_(m.bias, 0)
    end
end

function ConvNeXt:forward_features(x)
    -- for i in range(4):
    for i = 1, 4 do
        x = self.downsample_layers[i](x)
        x = self.stages[i](x)
    end
    -- return self.norm(x.mean([-2, -1])) # global average pooling, (N, C, H, W) -> (N, C)
    return self.norm(x:mean({ -2, -1 }))
end

function ConvNeXt:forward(x)
    x = self:forward_features(x)
    x = self.head(x)
    return x
end

-- class LayerNorm(nn.Module):
LayerNorm = nn.Module:extend("LayerNorm")
-- def __init__(self, normalized_shape, eps=1e-6, data_format="channels_last"):
function LayerNorm:init(normalized_shape, o)
    o = o or {}
    self.weight = nn.Parameter(tide.ones(normalized_shape))
    self.bias = nn.Parameter(tide.zeros(normalized_shape))
    self.eps = o.eps or 1e-6
    self.data_format = o.data_format or "channels_last"
    -- if self.data_format not in ["channels_last", "channels_first"]:
    if self.data_format ~= "channels_last" and self.data_format ~= "channels_first" then
        -- raise NotImplementedError
        error("NotImplementedError")
    end
    -- self.normalized_shape = (normalized_shape, )
    self.normalized_shape = { normalized_shape }
end

function LayerNorm:forward(x)
    if self.data_format == "channels_last" then
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
    elseif self.data_format == "channels_first" then
        -- u = x.mean(1, keepdim=True)
        local u = x:mean(2, { keepdim = true })
        -- s = (x - u).pow(2).mean(1, keepdim=True)
        local s = (x - u):pow(2):mean(2, { keepdim = true })
        x = (x - u) / tide.sqrt(s + self.eps)
        -- x = self.weight[:, None, None] * x + self.bias[:, None, None]
        local nw = tide.newaxis
        x = self.weight[{ {}, nw, nw }] * x + self.bias[{ {}, nw, nw }]
        return x
    end
end

---------------------------------------------------------------------------------------------
-- the test's fixed weights and input (the same formulas in the PyTorch reference)
---------------------------------------------------------------------------------------------
-- in place of trunc_normal_(t, std=.02): the c-th call (apply's order, children first, as
-- PyTorch's) writes std * 10 * sin(0.37 i + 0.5 c) * cos(0.11 i - c) over the index i
local formula_calls = 0
local function FORMULA_INIT(t, o)
    formula_calls = formula_calls + 1
    local c = formula_calls
    local i = tide.arange(t:numel(), { dtype = "float64" })
    tide.no_grad(function()
        t:copy_((o.std * 10 * tide.sin(0.37 * i + 0.5 * c) * tide.cos(0.11 * i - c)):view(t.shape))
    end)
end

local function make_input()
    local i = tide.arange(2 * 3 * 32 * 32, { dtype = "float64" })
    return (tide.sin(0.013 * i) + 0.5 * tide.cos(0.29 * i + 1)):float():view(2, 3, 32, 32)
end

local function shape_of(t)
    local s = {}
    for i = 1, t.ndim do s[i] = t:size(i) end
    return s
end

-- 6 evenly spaced entries of t flattened (the reference's pick)
local function pick(t)
    local f = t:reshape(-1)
    local n = f:numel()
    local out = {}
    for j = 0, 5 do
        out[#out + 1] = f[math.floor(j * (n - 1) / 5) + 1]:item()
    end
    return out
end

-- t's shape, sum and picks agree with PyTorch's, to tol relative to the largest pick (so the
-- input's gradient, ~1e-3, is compared at its own scale)
local function check(want, t, tol, what)
    assert.same(want.shape, shape_of(t))
    local scale = 0
    for _, v in ipairs(want.pick) do scale = math.max(scale, math.abs(v)) end
    local got = pick(t)
    for k, v in ipairs(want.pick) do
        assert(math.abs(got[k] - v) <= tol * scale, string.format("%s[%d]: %.8g, PyTorch %.8g",
            what, k, got[k], v))
    end
    local s = t:sum():item()
    assert(math.abs(s - want.sum) <= tol * math.max(1, math.abs(want.sum)) * 4,
        string.format("%s sum: %.8g, PyTorch %.8g", what, s, want.sum))
end

-- PyTorch 1.13's values (/tmp reference script: the modules above in Python, same formulas)
local REF = {
    ln_cf = { shape = { 2, 3, 32, 32 }, sum = 481.27179,
        pick = { -0.221291691, 0.801788867, -1.10998535, 0.481238872, 1.2812804, 1.12045217 } },
    ds1 = { shape = { 2, 8, 8, 8 }, sum = -1.72806904e-06,
        pick = { -0.750003517, -1.0764519, -1.40065324, -1.14765906, -0.250671327, -0.755916178 } },
    stage1 = { shape = { 2, 8, 8, 8 }, sum = -1.05478501,
        pick = {
            -0.761475563, -1.12843728, -1.48308933, -1.13515472, -0.228522956, -0.720441103
        } },
    ds2 = { shape = { 2, 16, 4, 4 }, sum = 1.0947361,
        pick = { 0.513709605, 1.23963022, -0.193279803, -0.625881672, -0.966523349, 1.09596539 } },
    stage2 = { shape = { 2, 16, 4, 4 }, sum = 1.19567168,
        pick = { 0.517278314, 1.22796977, -0.179535076, -0.627621531, -0.975917995, 1.10335088 } },
    ds3 = { shape = { 2, 24, 2, 2 }, sum = 0.0902594328,
        pick = { 0.168285489, 0.0343507789, 0.240936011, 0.136188716, -0.10879714, 0.230673015 } },
    stage3 = { shape = { 2, 24, 2, 2 }, sum = -0.0142874122,
        pick = { 0.236331627, 0.0588921905, 0.246964961, 0.122273505, -0.101719029, 0.214195848 } },
    ds4 = { shape = { 2, 32, 1, 1 }, sum = 0.426242322,
        pick = {
            0.772925377, -0.662722945, -0.0521961749, -0.230701998, 0.762602806, -0.751720309
        } },
    stage4 = { shape = { 2, 32, 1, 1 }, sum = 0.242587984,
        pick = {
            0.709478378, -0.582587838, -0.0264589638, -0.227691084, 0.741669416, -0.785679579
        } },
    features = { shape = { 2, 32 }, sum = -2.38418579e-07,
        pick = { 1.52449143, -0.856815696, 0.168142334, -0.53510946, 0.934490263, -1.38104844 } },
    logits = { shape = { 2, 5 }, sum = -0.039221108,
        pick = {
            -0.374114037, 0.552510738, -0.435993075, 0.329393059, 0.209207684, -0.633937061
        } },
    loss = 1.70098865,
    x_grad = { shape = { 2, 3, 32, 32 }, sum = -0.0626721606,
        pick = {
            -0.00128489698, -0.000193774511, -0.00126448344, -0.000158969779, 0.000347913767,
            -0.00101745117
        } },
    dwconv_grad = { shape = { 16, 1, 7, 7 }, sum = 0.00177320652,
        pick = {
            0.000345895765, -0.000671654474, 0.00442786282, -0.000714798109, 0.00147805864,
            0.00263130129
        } },
    gamma_grad = { shape = { 8 }, sum = -0.0127517767,
        pick = {
            0.0286365002, 0.0136613678, 0.0239264518, -0.0169166215, -0.0576260686, 0.0198280104
        } },
    stem_ln_w_grad = { shape = { 8 }, sum = 0.00637579709,
        pick = {
            0.00103029236, 0.0343794748, 0.0105477963, -0.0833777636, -0.00654802844, 0.0502370261
        } },
    dwconv_after = { shape = { 16, 1, 7, 7 }, sum = 0.426797748,
        pick = {
            0.0120122349, 0.182968915, 0.0124858189, 0.194630891, -0.00995693356, 0.173270494
        } },
    head_w_after = { shape = { 5, 32 }, sum = 0.0381955877,
        pick = {
            -0.00109471101, -0.005814109, 0.031502638, -0.0356096588, 0.0106660025, 0.00134175736
        } },
    gamma_after = { shape = { 8 }, sum = 3.97799969,
        pick = { 0.489749998, 0.489749998, 0.489749998, 0.509750009, 0.509750009, 0.489749998 } },
    loss2 = 1.32866549,
}

local function build(opts)
    return ConvNeXt({ in_chans = 3, num_classes = 5, depths = { 1, 1, 2, 1 },
        dims = { 8, 16, 24, 32 }, layer_scale_init_value = opts.layer_scale_init_value,
        head_init_scale = opts.head_init_scale, drop_path_rate = opts.drop_path_rate })
end

describe("ported scripts 194: ConvNeXt (models/convnext.py)", function()
    it("the channels_first LayerNorm normalizes over dim 2 and applies its affine", function()
        local x = make_input()
        local ln = LayerNorm(3, { eps = 1e-6, data_format = "channels_first" })
        tide.no_grad(function()
            ln.weight:copy_(tide.tensor({ 0.5, 1.5, -1.0 }))
            ln.bias:copy_(tide.tensor({ 0.1, -0.2, 0.3 }))
        end)
        check(REF.ln_cf, ln(x), 1e-5, "ln_cf")
        -- the same affine channels_last (F.layer_norm over the last dim) agrees
        local cl = LayerNorm(3)
        tide.no_grad(function()
            cl.weight:copy_(ln.weight)
            cl.bias:copy_(ln.bias)
        end)
        local y = cl(x:permute(1, 3, 4, 2))
        assert.is_true(tide.allclose(y, ln(x):permute(1, 3, 4, 2), { atol = 1e-5 }))
        local ok, err = pcall(LayerNorm, 3, { data_format = "nhwc" })
        assert.is_false(ok)
        assert.truthy(tostring(err):find("NotImplementedError"))
    end)

    it("the init: trunc_normal_ std 0.02, zero biases, gamma, head_init_scale", function()
        local model = build({ head_init_scale = 0.25 })
        local n = 0
        for _, m in ipairs(model:modules()) do
            if tide.isinstance(m, { nn.Conv2d, nn.Linear }) then
                n = n + 1
                assert.equal(0, m.bias:abs():max():item())
                assert.truthy(m.weight:abs():max():item() <= 2)
            end
        end
        -- 4 stem / downsample convs, 5 blocks of 3, the head
        assert.equal(4 + 5 * 3 + 1, n)
        local w = model.stages[2][1].pwconv1.weight -- 64 x 16, 1024 draws
        assert.truthy(math.abs(w:std():item() - 0.02) < 0.004)
        -- the head's draw is scaled by head_init_scale
        assert.truthy(math.abs(model.head.weight:std():item() - 0.005) < 0.002)
        assert.same({ 8 }, shape_of(model.stages[1][1].gamma))
        assert.is_true(tide.equal(model.stages[1][1].gamma, 1e-6 * tide.ones(8)))
        assert.equal("Identity", model.stages[1][1].drop_path.__name)
        -- layer_scale_init_value 0: no gamma
        local m0 = build({ layer_scale_init_value = 0 })
        assert.is_nil(m0.stages[1][1].gamma)
        -- PyTorch's model has 65 parameter tensors, 31925 numbers
        assert.equal(65, #model:parameters())
        local numel = 0
        for _, p in ipairs(model:parameters()) do numel = numel + p:numel() end
        assert.equal(31925, numel)
    end)

    it("forward, loss, gradients and one AdamW step match PyTorch's (formula weights)", function()
        trunc_normal_, formula_calls = FORMULA_INIT, 0
        local model = build({ layer_scale_init_value = 0.5, head_init_scale = 0.25 })
        trunc_normal_ = nn.init.trunc_normal_
        assert.equal(20, formula_calls)
        model:eval()
        local x = make_input():requires_grad_(true)
        local h = x
        -- each downsample layer's and stage's output
        for i = 1, 4 do
            h = model.downsample_layers[i](h)
            check(REF["ds" .. i], h, 1e-4, "ds" .. i)
            h = model.stages[i](h)
            check(REF["stage" .. i], h, 1e-4, "stage" .. i)
        end
        check(REF.features, model:forward_features(x), 1e-4, "features")
        local logits = model(x)
        check(REF.logits, logits, 1e-4, "logits")
        -- target = torch.tensor([0, 3])
        local target = tide.tensor({ 1, 4 })
        local loss = F.cross_entropy(logits, target)
        assert.truthy(math.abs(loss:item() - REF.loss) < 1e-5)
        loss:backward()
        check(REF.x_grad, x.grad, 1e-3, "x.grad")
        check(REF.dwconv_grad, model.stages[2][1].dwconv.weight.grad, 1e-3, "dwconv grad")
        check(REF.gamma_grad, model.stages[1][1].gamma.grad, 1e-3, "gamma grad")
        check(REF.stem_ln_w_grad, model.downsample_layers[1][2].weight.grad, 1e-3, "stem ln grad")
        -- opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.05)
        local opt = optim.AdamW(model:parameters(), { lr = 1e-2, weight_decay = 0.05 })
        opt:step()
        check(REF.dwconv_after, model.stages[2][1].dwconv.weight, 1e-4, "dwconv after")
        check(REF.head_w_after, model.head.weight, 1e-4, "head.weight after")
        check(REF.gamma_after, model.stages[1][1].gamma, 1e-5, "gamma after")
        local loss2 = tide.no_grad(function() return F.cross_entropy(model(x), target) end)
        assert_finite(loss2:item(), "loss2")
        assert.truthy(math.abs(loss2:item() - REF.loss2) < 1e-4)
        assert.truthy(loss2:item() < loss:item())
    end)

    it("DropPath in training keeps or drops each sample's branch, scaled by 1 / keep_prob",
        function()
        tide.manual_seed(194)
        trunc_normal_, formula_calls = FORMULA_INIT, 0
        -- drop_path_rate 0.5 over 5 blocks: torch.linspace(0, 0.5, 5)
        local model = build({ layer_scale_init_value = 0.5, drop_path_rate = 0.5 })
        trunc_normal_ = nn.init.trunc_normal_
        local last = model.stages[4][1]
        assert.equal("DropPath", last.drop_path.__name)
        assert.equal(0.5, last.drop_path.drop_prob)
        assert.equal("Identity", model.stages[1][1].drop_path.__name)
        assert.equal(0.25, model.stages[3][1].drop_path.drop_prob)
        local x = tide.randn(4, 32, 1, 1)
        -- the branch, as Block:forward computes it before drop_path
        local branch = last.dwconv(x):permute(1, 3, 4, 2)
        branch = last.pwconv2(last.act(last.pwconv1(last.norm(branch))))
        branch = (last.gamma * branch):permute(1, 4, 2, 3)
        last:eval()
        assert.is_true(tide.allclose(last(x), x + branch, { atol = 1e-6 }))
        last:train()
        local kept, dropped = 0, 0
        for _ = 1, 4 do
            local y = last(x)
            for b = 1, 4 do
                if tide.allclose(y[b], x[b], { atol = 1e-6 }) then
                    dropped = dropped + 1
                else
                    assert.is_true(tide.allclose(y[b], x[b] + 2 * branch[b], { atol = 1e-5 }))
                    kept = kept + 1
                end
            end
        end
        assert.equal(16, kept + dropped)
        assert.truthy(kept > 0 and dropped > 0)
    end)
end)
