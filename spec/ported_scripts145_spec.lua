-- ported_scripts145_spec.lua — lucidrains/vit-pytorch's vit_pytorch/distill.py (DistillMixin with
-- its distill_token concatenation and pos_embedding slice, DistillableViT with to_vit,
-- DistillWrapper with temperature, alpha, hard, the soft KL loss and the hard argmax path) over
-- vit_pytorch/vit.py's ViT (FeedForward, Attention, Transformer), and facebookresearch/deit's
-- losses.py (DistillationLoss: 'none' / 'soft' / 'hard', tuple outputs, its ValueError), ported
-- line for line at tiny sizes (image 8 x 8, patch 4, dim 8, depth 1, heads 2, 3 classes,
-- batch 2). A Linear on the flattened image stands in for DeiT's ResNet teacher.
-- The Python line stands above each Lua line that differs from it. Dims and class targets are
-- 1-based. distill.py's DistillableT2TViT and DistillableEfficientViT are not ported (they need
-- t2t.py / efficient.py's models; T2TViT's (1, 1, dim) cls_token does not even fit the mixin's
-- repeat 'n d -> b n d' upstream).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local einops = tide.einops
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list
local close = ported.close

-- from einops import rearrange, repeat
local rearrange, repeat_ = einops.rearrange, einops.repeat_
-- from einops.layers.torch import Rearrange
local Rearrange = einops.layers.Rearrange

---------------------------------------------------------------------------------------------
-- 1. vit_pytorch/vit.py
---------------------------------------------------------------------------------------------
-- def pair(t):
local function pair(t)
    -- return t if isinstance(t, tuple) else (t, t)
    if type(t) == "table" then return t[1], t[2] end
    return t, t
end

-- class FeedForward(Module):
local FeedForward = nn.Module:extend("FeedForward")
-- def __init__(self, dim, hidden_dim, dropout = 0.):
function FeedForward:init(dim, hidden_dim, dropout)
    dropout = dropout or 0
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

-- class Attention(Module):
local Attention = nn.Module:extend("Attention")
-- def __init__(self, dim, heads = 8, dim_head = 64, dropout = 0.):
function Attention:init(dim, heads, dim_head, dropout)
    heads, dim_head, dropout = heads or 8, dim_head or 64, dropout or 0
    -- inner_dim = dim_head *  heads
    local inner_dim = dim_head * heads
    -- project_out = not (heads == 1 and dim_head == dim)
    local project_out = not (heads == 1 and dim_head == dim)

    self.heads = heads
    self.scale = dim_head ^ -0.5

    self.norm = nn.LayerNorm(dim)

    -- self.attend = nn.Softmax(dim = -1)
    self.attend = nn.Softmax({ dim = -1 })
    self.dropout = nn.Dropout(dropout)

    -- self.to_qkv = nn.Linear(dim, inner_dim * 3, bias = False)
    self.to_qkv = nn.Linear(dim, inner_dim * 3, { bias = false })

    -- self.to_out = nn.Sequential(
    --     nn.Linear(inner_dim, dim),
    --     nn.Dropout(dropout)
    -- ) if project_out else nn.Identity()
    self.to_out = project_out and nn.Sequential(
        nn.Linear(inner_dim, dim),
        nn.Dropout(dropout)
    ) or nn.Identity()
end

function Attention:forward(x)
    x = self.norm(x)

    -- qkv = self.to_qkv(x).chunk(3, dim = -1)
    local qkv = self.to_qkv(x):chunk(3, -1)
    -- q, k, v = map(lambda t: rearrange(t, 'b n (h d) -> b h n d', h = self.heads), qkv)
    local q, k, v = unpack((function()
        local r = {}
        for i, t in ipairs(qkv) do
            r[i] = rearrange(t, "b n (h d) -> b h n d", { h = self.heads })
        end
        return r
    end)())

    -- dots = torch.matmul(q, k.transpose(-1, -2)) * self.scale
    local dots = tide.matmul(q, k:transpose(-1, -2)) * self.scale

    local attn = self.attend(dots)
    attn = self.dropout(attn)

    -- out = torch.matmul(attn, v)
    local out = tide.matmul(attn, v)
    -- out = rearrange(out, 'b h n d -> b n (h d)')
    out = rearrange(out, "b h n d -> b n (h d)")
    return self.to_out(out)
end

-- class Transformer(Module):
local Transformer = nn.Module:extend("Transformer")
-- def __init__(self, dim, depth, heads, dim_head, mlp_dim, dropout = 0.):
function Transformer:init(dim, depth, heads, dim_head, mlp_dim, dropout)
    self.norm = nn.LayerNorm(dim)
    -- self.layers = ModuleList([])
    self.layers = nn.ModuleList({})

    -- for _ in range(depth):
    for _ = 1, depth do
        -- self.layers.append(ModuleList([
        --     Attention(dim, heads = heads, dim_head = dim_head, dropout = dropout),
        --     FeedForward(dim, mlp_dim, dropout = dropout)
        -- ]))
        self.layers:append(nn.ModuleList({
            Attention(dim, heads, dim_head, dropout),
            FeedForward(dim, mlp_dim, dropout)
        }))
    end
end

function Transformer:forward(x)
    -- for attn, ff in self.layers:
    for _, layer in ipairs(self.layers:children()) do
        local attn, ff = layer[1], layer[2]
        x = attn(x) + x
        x = ff(x) + x
    end

    return self.norm(x)
end

-- class ViT(Module):
local ViT = nn.Module:extend("ViT")
-- def __init__(self, *, image_size, patch_size, num_classes, dim, depth, heads, mlp_dim,
--              pool = 'cls', channels = 3, dim_head = 64, dropout = 0., emb_dropout = 0.):
function ViT:init(o)
    local image_size, patch_size, num_classes, dim = o.image_size, o.patch_size, o.num_classes,
        o.dim
    local depth, heads, mlp_dim, pool = o.depth, o.heads, o.mlp_dim, o.pool or "cls"
    local channels, dim_head, dropout = o.channels or 3, o.dim_head or 64, o.dropout or 0
    local emb_dropout = o.emb_dropout or 0
    -- image_height, image_width = pair(image_size)
    local image_height, image_width = pair(image_size)
    -- self.patch_size = patch_height, patch_width = pair(patch_size)
    local patch_height, patch_width = pair(patch_size)
    self.patch_size = { patch_height, patch_width }

    -- assert image_height % patch_height == 0 and image_width % patch_width == 0, 'Image
    --     dimensions must be divisible by the patch size.'
    assert(image_height % patch_height == 0 and image_width % patch_width == 0,
        "Image dimensions must be divisible by the patch size.")

    -- num_patches = (image_height // patch_height) * (image_width // patch_width)
    local num_patches = math.floor(image_height / patch_height)
        * math.floor(image_width / patch_width)
    local patch_dim = channels * patch_height * patch_width

    -- assert pool in {'cls', 'mean'}, 'pool type must be either cls (cls token) or mean (mean
    --     pooling)'
    assert(pool == "cls" or pool == "mean",
        "pool type must be either cls (cls token) or mean (mean pooling)")
    -- num_cls_tokens = 1 if pool == 'cls' else 0
    local num_cls_tokens = pool == "cls" and 1 or 0

    self.to_patch_embedding = nn.Sequential(
        -- Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1 = patch_height,
        --           p2 = patch_width),
        Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)",
            { p1 = patch_height, p2 = patch_width }),
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
    if num_classes > 0 then self.mlp_head = nn.Linear(dim, num_classes) end
end

function ViT:forward(img)
    -- batch = img.shape[0]
    local batch = img:size(1)
    local x = self.to_patch_embedding(img)

    -- cls_tokens = repeat(self.cls_token, '... d -> b ... d', b = batch)
    local cls_tokens = repeat_(self.cls_token, "... d -> b ... d", { b = batch })
    -- x = torch.cat((cls_tokens, x), dim = 1)
    x = tide.cat({ cls_tokens, x }, 2)

    -- seq = x.shape[1]
    local seq = x:size(2)

    -- x = x + self.pos_embedding[:seq]
    x = x + self.pos_embedding[{ { 1, seq } }]
    x = self.dropout(x)

    x = self.transformer(x)

    -- if self.mlp_head is None:
    if self.mlp_head == nil then
        return x
    end

    -- x = x.mean(dim = 1) if self.pool == 'mean' else x[:, 0]
    if self.pool == "mean" then x = x:mean({ dim = 2 }) else x = x[{ {}, 1 }] end

    x = self.to_latent(x)
    return self.mlp_head(x)
end

---------------------------------------------------------------------------------------------
-- 2. vit_pytorch/distill.py
---------------------------------------------------------------------------------------------
-- helpers

-- def exists(val):
local function exists(val)
    -- return val is not None
    return val ~= nil
end

-- def default(val, d):
local function default(val, d)
    -- return val if exists(val) else d
    if exists(val) then return val end
    return d
end

-- classes

-- class DistillMixin:
local DistillMixin = {}
-- def forward(self, img, distill_token = None):
function DistillMixin.forward(self, img, distill_token)
    local distilling = exists(distill_token)
    local x = self.to_patch_embedding(img)
    -- b, n, _ = x.shape
    local b, n = x:size(1), x:size(2)

    -- cls_tokens = repeat(self.cls_token, 'n d -> b n d', b = b)
    local cls_tokens = repeat_(self.cls_token, "n d -> b n d", { b = b })
    -- x = torch.cat((cls_tokens, x), dim = 1)
    x = tide.cat({ cls_tokens, x }, 2)
    -- x += self.pos_embedding[:(n + 1)]
    x:add_(self.pos_embedding[{ { 1, n + 1 } }])

    local distill_tokens
    if distilling then
        -- distill_tokens = repeat(distill_token, 'n d -> b n d', b = b)
        distill_tokens = repeat_(distill_token, "n d -> b n d", { b = b })
        -- x = torch.cat((x, distill_tokens), dim = 1)
        x = tide.cat({ x, distill_tokens }, 2)
    end

    x = self:_attend(x)

    if distilling then
        -- x, distill_tokens = x[:, :-1], x[:, -1]
        x, distill_tokens = x[{ {}, { 1, -2 } }], x[{ {}, -1 }]
    end

    -- x = x.mean(dim = 1) if self.pool == 'mean' else x[:, 0]
    if self.pool == "mean" then x = x:mean({ dim = 2 }) else x = x[{ {}, 1 }] end

    x = self.to_latent(x)
    local out = self.mlp_head(x)

    if distilling then
        -- return out, distill_tokens
        return out, distill_tokens
    end

    return out
end

-- class DistillableViT(DistillMixin, ViT):
local DistillableViT = ViT:extend("DistillableViT")
DistillableViT.forward = DistillMixin.forward -- (DistillMixin comes first in the MRO)
-- def __init__(self, *args, **kwargs):
function DistillableViT:init(kwargs)
    -- super(DistillableViT, self).__init__(*args, **kwargs)
    ViT.init(self, kwargs)
    self.kwargs = kwargs
    -- self.dim = kwargs['dim']
    self.dim = kwargs.dim
    -- self.num_classes = kwargs['num_classes']
    self.num_classes = kwargs.num_classes
end

function DistillableViT:to_vit()
    -- v = ViT(*self.args, **self.kwargs)
    local v = ViT(self.kwargs)
    -- v.load_state_dict(self.state_dict())
    v:load_state_dict(self:state_dict())
    return v
end

function DistillableViT:_attend(x)
    x = self.dropout(x)
    x = self.transformer(x)
    return x
end

-- knowledge distillation wrapper

-- class DistillWrapper(Module):
local DistillWrapper = nn.Module:extend("DistillWrapper")
-- def __init__(self, *, teacher, student, temperature = 1., alpha = 0.5, hard = False,
--              mlp_layernorm = False):
function DistillWrapper:init(o)
    local teacher, student = o.teacher, o.student
    local temperature, alpha = default(o.temperature, 1.), default(o.alpha, 0.5)
    local hard, mlp_layernorm = default(o.hard, false), default(o.mlp_layernorm, false)
    -- assert (isinstance(student, (DistillableViT, DistillableT2TViT, DistillableEfficientViT))),
    --     'student must be a vision transformer'
    assert(tide.isinstance(student, { DistillableViT }), "student must be a vision transformer")

    self.teacher = teacher
    self.student = student

    local dim = student.dim
    local num_classes = student.num_classes
    self.temperature = temperature
    self.alpha = alpha
    self.hard = hard

    self.distillation_token = nn.Parameter(tide.randn(1, dim))

    self.distill_mlp = nn.Sequential(
        -- nn.LayerNorm(dim) if mlp_layernorm else nn.Identity(),
        mlp_layernorm and nn.LayerNorm(dim) or nn.Identity(),
        nn.Linear(dim, num_classes)
    )
end

-- def forward(self, img, labels, temperature = None, alpha = None, **kwargs):
function DistillWrapper:forward(img, labels, temperature, alpha)
    alpha = default(alpha, self.alpha)
    local T = default(temperature, self.temperature)

    -- with torch.no_grad():
    --     teacher_logits = self.teacher(img)
    local teacher_logits = tide.no_grad(function() return self.teacher(img) end)

    -- student_logits, distill_tokens = self.student(img, distill_token =
    --     self.distillation_token, **kwargs)
    local student_logits, distill_tokens = self.student(img, self.distillation_token)
    local distill_logits = self.distill_mlp(distill_tokens)

    local loss = F.cross_entropy(student_logits, labels)

    local distill_loss
    if not self.hard then
        -- distill_loss = F.kl_div(
        --     F.log_softmax(distill_logits / T, dim = -1),
        --     F.softmax(teacher_logits / T, dim = -1).detach(),
        -- reduction = 'batchmean')
        distill_loss = F.kl_div(
            F.log_softmax(distill_logits / T, { dim = -1 }),
            F.softmax(teacher_logits / T, { dim = -1 }):detach(),
            { reduction = "batchmean" })
        -- distill_loss *= T ** 2
        distill_loss = distill_loss * T ^ 2
    else
        -- teacher_labels = teacher_logits.argmax(dim = -1)
        local teacher_labels = teacher_logits:argmax({ dim = -1 })
        distill_loss = F.cross_entropy(distill_logits, teacher_labels)
    end

    return loss * (1 - alpha) + distill_loss * alpha
end

---------------------------------------------------------------------------------------------
-- 3. facebookresearch/deit losses.py
---------------------------------------------------------------------------------------------
-- class DistillationLoss(torch.nn.Module):
local DistillationLoss = nn.Module:extend("DistillationLoss")
-- def __init__(self, base_criterion: torch.nn.Module, teacher_model: torch.nn.Module,
--              distillation_type: str, alpha: float, tau: float):
function DistillationLoss:init(base_criterion, teacher_model, distillation_type, alpha, tau)
    self.base_criterion = base_criterion
    self.teacher_model = teacher_model
    -- assert distillation_type in ['none', 'soft', 'hard']
    assert(distillation_type == "none" or distillation_type == "soft"
        or distillation_type == "hard")
    self.distillation_type = distillation_type
    self.alpha = alpha
    self.tau = tau
end

function DistillationLoss:forward(inputs, outputs, labels)
    -- outputs_kd = None
    local outputs_kd = nil
    -- if not isinstance(outputs, torch.Tensor):
    if not tide.is_tensor(outputs) then
        -- assume that the model outputs a tuple of [outputs, outputs_kd]
        -- outputs, outputs_kd = outputs
        outputs, outputs_kd = outputs[1], outputs[2]
    end
    local base_loss = self.base_criterion(outputs, labels)
    if self.distillation_type == "none" then
        return base_loss
    end

    if outputs_kd == nil then
        -- raise ValueError("When knowledge distillation is enabled, the model is "
        error("When knowledge distillation is enabled, the model is "
            .. "expected to return a Tuple[Tensor, Tensor] with the output of the "
            .. "class_token and the dist_token")
    end
    -- don't backprop throught the teacher
    -- with torch.no_grad():
    --     teacher_outputs = self.teacher_model(inputs)
    local teacher_outputs = tide.no_grad(function() return self.teacher_model(inputs) end)

    local distillation_loss
    if self.distillation_type == "soft" then
        local T = self.tau
        -- distillation_loss = F.kl_div(
        --     F.log_softmax(outputs_kd / T, dim=1),
        --     F.log_softmax(teacher_outputs / T, dim=1),
        --     reduction='sum',
        --     log_target=True
        -- ) * (T * T) / outputs_kd.numel()
        distillation_loss = F.kl_div(
            F.log_softmax(outputs_kd / T, { dim = 2 }),
            F.log_softmax(teacher_outputs / T, { dim = 2 }),
            { reduction = "sum", log_target = true }
        ) * (T * T) / outputs_kd:numel()
    elseif self.distillation_type == "hard" then
        -- distillation_loss = F.cross_entropy(outputs_kd, teacher_outputs.argmax(dim=1))
        distillation_loss = F.cross_entropy(outputs_kd, teacher_outputs:argmax({ dim = 2 }))
    end

    local loss = base_loss * (1 - self.alpha) + distillation_loss * self.alpha
    return loss
end

---------------------------------------------------------------------------------------------
-- the checks
---------------------------------------------------------------------------------------------
-- for i, (n, p) in enumerate(model.named_parameters()):
--     j = torch.arange(p.numel())
--     p.copy_(((((j * j * 7 + j * 3 + i * 5) % 23) / 23 - 0.5) * 0.8).reshape(p.shape))
local function det_init(model)
    tide.no_grad(function()
        for i, np_ in ipairs(model:named_parameters()) do
            local p = np_[2]
            local j = tide.arange(0, p:numel())
            p:copy_(((((j * j * 7 + j * 3 + (i - 1) * 5) % 23) / 23 - 0.5) * 0.8)
                :reshape(p.shape))
        end
    end)
end

-- k = torch.arange(2*3*8*8); img = (((k * k * 7 + k * 3) % 23) / 11.0 - 1).reshape(2, 3, 8, 8)
local function image()
    local k = tide.arange(0, 2 * 3 * 8 * 8)
    return (((k * k * 7 + k * 3) % 23) / 11.0 - 1):reshape(2, 3, 8, 8)
end

-- labels = torch.tensor([0, 2])
local function labels() return tide.tensor({ 1, 3 }, { dtype = "int64" }) end

local KWARGS = { image_size = 8, patch_size = 4, num_classes = 3, dim = 8, depth = 1,
    heads = 2, mlp_dim = 16, dim_head = 4 }

-- student = DistillableViT(image_size=8, patch_size=4, num_classes=3, dim=8, depth=1, heads=2,
--                          mlp_dim=16, dim_head=4)
-- teacher = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 3))
-- w = DistillWrapper(teacher=teacher, student=student, temperature=3., alpha=0.5)
local function build()
    local student = DistillableViT(KWARGS)
    local teacher = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 3))
    local w = DistillWrapper({ teacher = teacher, student = student, temperature = 3.,
        alpha = 0.5 })
    det_init(w)
    return w
end

local function flat(t) return t:reshape(-1):totable() end

-- PyTorch 1.13's values (the same weights and image)
local STUDENT = { -0.3849284, 0.1976604, 0.5258324, -0.3829272, 0.197503, 0.526185 }
local DISTILL = { 1.0524373, 0.4164008, -0.4095778, 1.0518996, 0.4177971, -0.4083122 }
local PLAIN = { -0.3892841, 0.199222, 0.5217845, -0.3867975, 0.1990362, 0.5222003 }

describe("ported vit_pytorch distill.py (DistillableViT, DistillWrapper)", function()
    it("builds PyTorch's parameters in named_parameters order", function()
        local w = build()
        local names = {}
        for _, np_ in ipairs(w:named_parameters()) do names[#names + 1] = np_[1] end
        assert.are.equal(28, #names)
        assert.are.same({ "distillation_token", "teacher.2.weight", "teacher.2.bias",
            "student.cls_token", "student.pos_embedding" }, { unpack(names, 1, 5) })
        assert.are.same({ "distill_mlp.2.weight", "distill_mlp.2.bias" }, { unpack(names, 27) })
        assert.are.same({ 5, 8 }, w.student.pos_embedding:size())
        assert.are.same({ 1, 8 }, w.student.cls_token:size())
        assert.error_matches(function()
            DistillWrapper({ teacher = w.teacher, student = ViT(KWARGS) })
        end, "student must be a vision transformer", 1, true)
    end)

    it("student logits and distill logits match PyTorch's; to_vit gives ViT's", function()
        local w = build()
        local img = image()
        -- out, dtok = w.student(img, distill_token=w.distillation_token)
        local out, dtok = w.student(img, w.distillation_token)
        assert.are.same({ 2, 3 }, out:size())
        assert.are.same({ 2, 8 }, dtok:size())
        assert_close_list(STUDENT, flat(out), 1e-4, "student")
        assert_close_list(DISTILL, flat(w.distill_mlp(dtok)), 1e-4, "distill")
        -- without a distill token: ViT's forward through the mixin, and ViT's own
        assert_close_list(PLAIN, flat(w.student(img)), 1e-4, "plain")
        local v = w.student:to_vit()
        assert.is_true(tide.isinstance(v, ViT) and not tide.isinstance(v, DistillableViT))
        assert_close_list(PLAIN, flat(v(img)), 1e-4, "to_vit")
    end)

    it("the soft and hard losses match PyTorch's", function()
        local w = build()
        local img, y = image(), labels()
        assert.is_true(close(w(img, y):item(), 0.8747752904891968, 1e-5))
        -- w(img, labels, temperature=1., alpha=0.25)
        assert.is_true(close(w(img, y, 1., 0.25):item(), 1.0198898315429688, 1e-5))
        -- the teacher's argmax: [1, 2] 0-based
        assert.are.same({ 2, 3 }, w.teacher(img):argmax({ dim = -1 }):totable())
        w.hard = true
        assert.is_true(close(w(img, y):item(), 1.411264181137085, 1e-5))
    end)

    it("2 SGD steps: PyTorch's losses, falling; the teacher gets no grad", function()
        local w = build()
        local img, y = image(), labels()
        -- opt = torch.optim.SGD(w.parameters(), lr=0.1)
        local opt = optim.SGD(w:parameters(), { lr = 0.1 })
        local losses = {}
        for _ = 1, 2 do
            opt:zero_grad()
            local loss = w(img, y)
            loss:backward()
            opt:step()
            losses[#losses + 1] = loss:item()
        end
        losses[3] = w(img, y):item()
        for _, l in ipairs(losses) do assert_finite(l, "loss") end
        assert_close_list({ 0.8747752904891968, 0.8363949060440063, 0.8045934438705444 },
            losses, 1e-5, "losses")
        assert.is_nil(w.teacher[2].weight.grad)
        assert.is_not_nil(w.distillation_token.grad)
    end)
end)

describe("ported deit losses.py (DistillationLoss)", function()
    local w, img, y, outs
    before_each(function()
        w, img, y = build(), image(), labels()
        local out, dtok = w.student(img, w.distillation_token)
        outs = { out, w.distill_mlp(dtok) }
    end)

    it("'none', 'soft' and 'hard' match PyTorch's (tuple and tensor outputs)", function()
        local want = { none = 1.2080247402191162, soft = 0.6916072964668274,
            hard = 1.411264181137085 }
        for _, t in ipairs({ "none", "soft", "hard" }) do
            -- crit = DistillationLoss(nn.CrossEntropyLoss(), w.teacher, t, 0.5, 2.0)
            local crit = DistillationLoss(nn.CrossEntropyLoss(), w.teacher, t, 0.5, 2.0)
            assert.is_true(close(crit(img, outs, y):item(), want[t], 1e-5), t)
        end
        local none = DistillationLoss(nn.CrossEntropyLoss(), w.teacher, "none", 0.5, 2.0)
        assert.is_true(close(none(img, outs[1], y):item(), want.none, 1e-5))
        -- the soft loss backpropagates to the student, not to the teacher
        local soft = DistillationLoss(nn.CrossEntropyLoss(), w.teacher, "soft", 0.5, 2.0)
        soft(img, outs, y):backward()
        assert.is_nil(w.teacher[2].weight.grad)
        assert.is_true(w.distillation_token.grad:abs():sum():item() > 0)
    end)

    it("raises its ValueError for a tensor output when distilling", function()
        local crit = DistillationLoss(nn.CrossEntropyLoss(), w.teacher, "soft", 0.5, 2.0)
        assert.has_error(function() crit(img, outs[1], y) end,
            "When knowledge distillation is enabled, the model is expected to return a "
            .. "Tuple[Tensor, Tensor] with the output of the class_token and the dist_token")
        assert.has_error(function()
            DistillationLoss(nn.CrossEntropyLoss(), w.teacher, "medium", 0.5, 2.0)
        end)
    end)
end)
