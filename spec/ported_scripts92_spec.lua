-- ported_scripts92_spec.lua — ultralytics/yolov5's models/common.py (autopad, Conv, DWConv,
-- Bottleneck, C3, SPPF, Focus, Concat), models/yolo.py (Detect with _make_grid, BaseModel's
-- _forward_once, DetectionModel's stride/anchor set-up and _initialize_biases),
-- utils/autoanchor.py's check_anchor_order, ultralytics' initialize_weights and smooth_bce,
-- bbox_iou from utils/metrics.py (before c22295bd moved it to ultralytics) and utils/loss.py's
-- ComputeLoss (build_targets, CIoU box loss, BCEWithLogitsLoss with pos_weight), ported line
-- for line at tiny sizes: a hand-built yolov5s-like backbone+head (widths 4..16, 2 detection
-- layers, nc 3) on a 32x32 input in place of parse_model. The Python line stands above each
-- Lua line that differs from it. Dims, image and class ids are 1-based; the yaml's layer
-- numbers (m.i, m.f, save) stay 0-based (they name layers). Values: PyTorch 1.13, same weights.
local tide = require("tide")
local nn = tide.nn

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list
local class = ported.class
local unpack4 = table.unpack or unpack -- luacheck: ignore

-- PyTorch 1.13's values for the same weights and inputs (the Python check, eval mode)
local REF = {
    conv = { { 2, 4, 16, 16 }, 112.200439, { 0.0887085, 0.0845172, 0.0910298, 0.0981538 } },
    dwconv = { { 2, 4, 8, 8 }, 30.764940, { 0.146004, 0.171384, 0.165911, 0.159307 } },
    bottleneck = { { 2, 4, 8, 8 }, -31.145578, { 0.914407, 0.906513, 0.881414, 0.840006 } },
    c3 = { { 2, 8, 8, 8 }, 13.529158, { 0.107565, 0.10752, 0.107505, 0.107494 } },
    sppf = { { 2, 4, 8, 8 }, -28.429077, { -0.0864099, -0.0864044, -0.0863941, -0.0863893 } },
    focus = { { 2, 4, 4, 4 }, 7.847791, { 0.0584607, 0.0517215, 0.0665043, 0.0898749 } },
    anchors = { 1.25, 1.625, 2.0, 3.75, 4.125, 2.875, 1.875, 3.8125, 3.875, 2.8125, 3.6875,
        7.4375 },
    train = { { { 2, 3, 4, 4, 8 }, -1019.179565, { 0.03676, -0.172622, -0.0957948, -0.247255,
        -6.83814, -1.41823 } }, { { 2, 3, 2, 2, 8 }, -213.522461, { -0.302092, -0.220863,
        -0.110275, 0.0149187, -5.16029, -0.961337 } } },
    z_sum = 10670.596680,
    z_first = { 4.14702, 3.31122, 9.06569, 9.99864, 0.00107095, 0.194939, 0.211322, 0.216397,
        12.147, 3.31123, 9.06567, 9.99867, 0.00107095, 0.194939, 0.211322, 0.216397 },
    z_last = { 21.2882, 21.5663, 46.257, 104.822, 0.0049763, 0.253391, 0.274072, 0.289407 },
    grid = { { -0.5, -0.5, 0.5, -0.5, 1.5, -0.5, 2.5, -0.5 },
        { -0.5, -0.5, 0.5, -0.5, -0.5, 0.5, 0.5, 0.5 } },
    anchor_grid_sum = { 2000, 1504 },
    anchor_grid = { { 10, 13, 16, 30, 33, 23 }, { 30, 61, 62, 45, 59, 119 } },
    iou = { 0.44, 0.119048, 0 },
    giou = { 0.365926, -0.103175, -0.9375 },
    diou = { 0.40357, -0.00984138, -0.664062 },
    ciou = { 0.402922, -0.0154169, -0.671045 },
    ciou_xyxy = { -2.35294, -15.65, -4.85 },
    -- build_targets (b, a, gj, gi are PyTorch's 0-based values; the port's are these + 1)
    bt = {
        { { 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0 },
            { 0, 0, 0, 1, 1, 2, 0, 0, 1, 0, 1, 2, 0, 1, 2, 0, 0, 1 },
            { 1, 2, 1, 1, 2, 2, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2 },
            { 1, 2, 2, 1, 2, 2, 0, 1, 0, 2, 2, 2, 3, 3, 3, 1, 2, 1 },
            { 1, 2, 0, 1, 2, 2, 1, 0, 1, 2, 2, 2, 2, 2, 2, 1, 0, 1 },
            { 0.2, 0.6, 1, 1.4, 0.8, 0.48, 2, 1.6, 0.0799999, 0.88, 0.48, 0.8 },
            { 1.25, 1.625, 1.25, 1.625, 1.25, 1.625, 2, 3.75, 2, 3.75, 4.125, 2.875 } },
        { { 0, 0, 0 }, { 1, 1, 1 }, { 1, 1, 0 }, { 1, 0, 1 }, { 2, 2, 2 },
            { 0.4, 0.24, 1, 0.8, 1.4, 0.24, 1, 0.8, 0.4, 1.24, 1, 0.8 },
            { 3.875, 2.8125, 3.875, 2.8125, 3.875, 2.8125 } },
    },
    loss = { 3.433093, 3.431488 }, -- falling
    loss_items = { 0.089448, 0.910408, 0.71669 },
}

-- deterministic weights, the same in the Python check:
-- for i, (n, p) in enumerate(model.named_parameters()):
--     p.copy_(torch.sin(torch.arange(p.numel()) * 0.37 + i).reshape(p.shape) * 0.2)
local function det_init(model)
    tide.no_grad(function()
        for i, np in ipairs(model:named_parameters()) do
            local p = np[2]
            p:copy_((tide.sin(tide.arange(0, p:numel()) * 0.37 + (i - 1)) * 0.2):reshape(p.shape))
        end
    end)
end

-- torch.cos(torch.arange(n, dtype=torch.float32) * 0.13).reshape(shape)
local function fixed(shape)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    return tide.cos(tide.arange(0, n) * 0.13):reshape(shape)
end

local function flat(t, k)
    local v = t:contiguous():view(-1):tolist()
    local out = {}
    for i = 1, math.min(k or #v, #v) do out[i] = v[i] end
    return out
end

---------------------------------------------------------------------------------------------
-- 1. models/common.py
---------------------------------------------------------------------------------------------
-- def autopad(k, p=None, d=1):
local function autopad(k, p, d)
    d = d or 1
    if d > 1 then
        -- k = d * (k - 1) + 1 if isinstance(k, int) else [d * (x - 1) + 1 for x in k]
        if type(k) == "number" then
            k = d * (k - 1) + 1
        else
            local kk = {}
            for i, x in ipairs(k) do kk[i] = d * (x - 1) + 1 end
            k = kk
        end
    end
    if p == nil then
        -- p = k // 2 if isinstance(k, int) else [x // 2 for x in k]  # auto-pad
        if type(k) == "number" then
            p = math.floor(k / 2)
        else
            p = {}
            for i, x in ipairs(k) do p[i] = math.floor(x / 2) end
        end
    end
    return p
end

-- class Conv(nn.Module):
local Conv = nn.Module:extend("Conv")
-- default_act = nn.SiLU()  # default activation
Conv.default_act = nn.SiLU()
-- def __init__(self, c1, c2, k=1, s=1, p=None, g=1, d=1, act=True):
function Conv:init(c1, c2, k, s, p, g, d, act)
    k, s, g, d = k or 1, s or 1, g or 1, d or 1
    if act == nil then act = true end
    -- self.conv = nn.Conv2d(c1, c2, k, s, autopad(k, p, d), groups=g, dilation=d, bias=False)
    self.conv = nn.Conv2d(c1, c2, k, { stride = s, padding = autopad(k, p, d), groups = g,
        dilation = d, bias = false })
    self.bn = nn.BatchNorm2d(c2)
    -- self.act = self.default_act if act is True else act if isinstance(act, nn.Module) else
    --     nn.Identity()
    self.act = act == true and self.default_act
        or (tide.isinstance(act, nn.Module) and act or nn.Identity())
end
function Conv:forward(x)
    return self.act(self.bn(self.conv(x)))
end
-- def forward_fuse(self, x):
function Conv:forward_fuse(x)
    return self.act(self.conv(x))
end

-- class DWConv(Conv):
local DWConv = Conv:extend("DWConv")
local function gcd(a, b)
    while b ~= 0 do a, b = b, a % b end
    return a
end
-- def __init__(self, c1, c2, k=1, s=1, d=1, act=True):
function DWConv:init(c1, c2, k, s, d, act)
    -- super().__init__(c1, c2, k, s, g=math.gcd(c1, c2), d=d, act=act)
    Conv.init(self, c1, c2, k, s, nil, gcd(c1, c2), d, act)
end

-- class Bottleneck(nn.Module):
local Bottleneck = nn.Module:extend("Bottleneck")
-- def __init__(self, c1, c2, shortcut=True, g=1, e=0.5):
function Bottleneck:init(c1, c2, shortcut, g, e)
    if shortcut == nil then shortcut = true end
    e = e or 0.5
    -- c_ = int(c2 * e)  # hidden channels
    local c_ = math.floor(c2 * e)
    self.cv1 = Conv(c1, c_, 1, 1)
    -- self.cv2 = Conv(c_, c2, 3, 1, g=g)
    self.cv2 = Conv(c_, c2, 3, 1, nil, g)
    self.add = shortcut and c1 == c2
end
function Bottleneck:forward(x)
    -- return x + self.cv2(self.cv1(x)) if self.add else self.cv2(self.cv1(x))
    if self.add then return x + self.cv2(self.cv1(x)) end
    return self.cv2(self.cv1(x))
end

-- class C3(nn.Module):
local C3 = nn.Module:extend("C3")
-- def __init__(self, c1, c2, n=1, shortcut=True, g=1, e=0.5):
function C3:init(c1, c2, n, shortcut, g, e)
    n, e = n or 1, e or 0.5
    local c_ = math.floor(c2 * e)
    self.cv1 = Conv(c1, c_, 1, 1)
    self.cv2 = Conv(c1, c_, 1, 1)
    self.cv3 = Conv(2 * c_, c2, 1) -- optional act=FReLU(c2)
    -- self.m = nn.Sequential(*(Bottleneck(c_, c_, shortcut, g, e=1.0) for _ in range(n)))
    local ms = {}
    for i = 1, n do ms[i] = Bottleneck(c_, c_, shortcut, g, 1.0) end
    self.m = nn.Sequential(unpack4(ms))
end
function C3:forward(x)
    -- return self.cv3(torch.cat((self.m(self.cv1(x)), self.cv2(x)), 1))
    return self.cv3(tide.cat({ self.m(self.cv1(x)), self.cv2(x) }, 2))
end

-- class SPPF(nn.Module):
local SPPF = nn.Module:extend("SPPF")
-- def __init__(self, c1, c2, k=5):
function SPPF:init(c1, c2, k)
    k = k or 5
    -- c_ = c1 // 2  # hidden channels
    local c_ = math.floor(c1 / 2)
    self.cv1 = Conv(c1, c_, 1, 1)
    self.cv2 = Conv(c_ * 4, c2, 1, 1)
    -- self.m = nn.MaxPool2d(kernel_size=k, stride=1, padding=k // 2)
    self.m = nn.MaxPool2d(k, { stride = 1, padding = math.floor(k / 2) })
end
function SPPF:forward(x)
    x = self.cv1(x)
    -- with warnings.catch_warnings(): (tide's max_pool2d warns nothing to suppress)
    local y1 = self.m(x)
    local y2 = self.m(y1)
    -- return self.cv2(torch.cat((x, y1, y2, self.m(y2)), 1))
    return self.cv2(tide.cat({ x, y1, y2, self.m(y2) }, 2))
end

-- class Focus(nn.Module):
local Focus = nn.Module:extend("Focus")
-- def __init__(self, c1, c2, k=1, s=1, p=None, g=1, act=True):
function Focus:init(c1, c2, k, s, p, g, act)
    -- self.conv = Conv(c1 * 4, c2, k, s, p, g, act=act)
    self.conv = Conv(c1 * 4, c2, k, s, p, g, nil, act)
end
function Focus:forward(x)
    -- return self.conv(torch.cat((x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2],
    --     x[..., 1::2, 1::2]), 1))
    return self.conv(tide.cat({ x[{ "...", { 1, -1, 2 }, { 1, -1, 2 } }],
        x[{ "...", { 2, -1, 2 }, { 1, -1, 2 } }], x[{ "...", { 1, -1, 2 }, { 2, -1, 2 } }],
        x[{ "...", { 2, -1, 2 }, { 2, -1, 2 } }] }, 2))
end

-- class Concat(nn.Module):
local Concat = nn.Module:extend("Concat")
-- def __init__(self, dimension=1):
function Concat:init(dimension)
    -- self.d = dimension
    self.d = dimension or 2
end
function Concat:forward(x)
    return tide.cat(x, self.d)
end

---------------------------------------------------------------------------------------------
-- 2. models/yolo.py
---------------------------------------------------------------------------------------------
-- class Detect(nn.Module):
local Detect = nn.Module:extend("Detect")
Detect.stride = nil -- strides computed during build
Detect.dynamic = false -- force grid reconstruction
Detect.export = false -- export mode
-- def __init__(self, nc=80, anchors=(), ch=(), inplace=True):
function Detect:init(nc, anchors, ch, inplace)
    self.nc = nc -- number of classes
    self.no = nc + 5 -- number of outputs per anchor
    self.nl = #anchors -- number of detection layers
    -- self.na = len(anchors[0]) // 2  # number of anchors
    self.na = math.floor(#anchors[1] / 2)
    -- self.grid = [torch.empty(0) for _ in range(self.nl)]  # init grid
    self.grid, self.anchor_grid = {}, {}
    for i = 1, self.nl do
        self.grid[i] = tide.empty(0)
        self.anchor_grid[i] = tide.empty(0)
    end
    -- self.register_buffer("anchors", torch.tensor(anchors).float().view(self.nl, -1, 2))
    self:register_buffer("anchors", tide.tensor(anchors):float():view(self.nl, -1, 2))
    -- self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)  # output conv
    local convs = {}
    for i, x in ipairs(ch) do convs[i] = nn.Conv2d(x, self.no * self.na, 1) end
    self.m = nn.ModuleList(convs)
    if inplace == nil then inplace = true end
    self.inplace = inplace -- use inplace ops (e.g. slice assignment)
end

-- def forward(self, x):
function Detect:forward(x)
    local z = {} -- inference output
    -- for i in range(self.nl):
    for i = 1, self.nl do
        x[i] = self.m[i](x[i]) -- conv
        -- bs, _, ny, nx = x[i].shape  # x(bs,255,20,20) to x(bs,3,20,20,85)
        local bs, ny, nx = x[i]:size(1), x[i]:size(3), x[i]:size(4)
        -- x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
        x[i] = x[i]:view(bs, self.na, self.no, ny, nx):permute(1, 2, 4, 5, 3):contiguous()

        if not self.training then -- inference
            -- if self.dynamic or self.grid[i].shape[2:4] != x[i].shape[2:4]:
            if self.dynamic or self.grid[i].ndim < 4 or self.grid[i]:size(3) ~= x[i]:size(3)
                or self.grid[i]:size(4) ~= x[i]:size(4) then
                -- self.grid[i], self.anchor_grid[i] = self._make_grid(nx, ny, i)
                self.grid[i], self.anchor_grid[i] = self:_make_grid(nx, ny, i)
            end
            -- xy, wh, conf = x[i].sigmoid().split((2, 2, self.nc + 1), 4)
            local xy, wh, conf = unpack4(x[i]:sigmoid():split({ 2, 2, self.nc + 1 }, 5))
            xy = (xy * 2 + self.grid[i]) * self.stride[i] -- xy
            wh = (wh * 2) ^ 2 * self.anchor_grid[i] -- wh
            -- y = torch.cat((xy, wh, conf), 4)
            local y = tide.cat({ xy, wh, conf }, 5)
            -- z.append(y.view(bs, self.na * nx * ny, self.no))
            z[#z + 1] = y:view(bs, self.na * nx * ny, self.no)
        end
    end
    -- return x if self.training else (torch.cat(z, 1),) if self.export else (torch.cat(z, 1), x)
    if self.training then return x end
    if self.export then return { tide.cat(z, 2) } end
    return { tide.cat(z, 2), x }
end

-- def _make_grid(self, nx=20, ny=20, i=0, torch_1_10=...):
function Detect:_make_grid(nx, ny, i)
    -- d = self.anchors[i].device
    local d = self.anchors[i].device
    local t = self.anchors[i].dtype
    -- shape = 1, self.na, ny, nx, 2  # grid shape
    local shape = { 1, self.na, ny, nx, 2 }
    -- y, x = torch.arange(ny, device=d, dtype=t), torch.arange(nx, device=d, dtype=t)
    local y = tide.arange(0, ny, { device = d, dtype = t })
    local x = tide.arange(0, nx, { device = d, dtype = t })
    -- yv, xv = torch.meshgrid(y, x, indexing="ij")
    local yv, xv = unpack4(tide.meshgrid(y, x, { indexing = "ij" }))
    -- grid = torch.stack((xv, yv), 2).expand(shape) - 0.5  # add grid offset
    local grid = tide.stack({ xv, yv }, 3):expand(shape) - 0.5
    -- anchor_grid = (self.anchors[i] * self.stride[i]).view((1, self.na, 1, 1, 2)).expand(shape)
    local anchor_grid = (self.anchors[i] * self.stride[i]):view({ 1, self.na, 1, 1, 2 })
        :expand(shape)
    return grid, anchor_grid
end

-- utils/autoanchor.py
-- def check_anchor_order(m):
local function check_anchor_order(m)
    -- a = m.anchors.prod(-1).mean(-1).view(-1)  # mean anchor area per output layer
    local a = m.anchors:prod(-1):mean(-1):view(-1)
    -- da = a[-1] - a[0]  # delta a
    local da = a[-1] - a[1]
    local ds = m.stride[-1] - m.stride[1] -- delta s
    -- if da and (da.sign() != ds.sign()):  # anchor order does not match stride order
    if da:item() ~= 0 and da:sign():item() ~= ds:sign():item() then
        -- m.anchors[:] = m.anchors.flip(0)
        m.anchors:copy_(m.anchors:flip(1))
    end
end

-- ultralytics.utils.torch_utils.initialize_weights
local function initialize_weights(model)
    -- for m in model.modules():
    for _, m in ipairs(model:modules()) do
        -- if t is nn.BatchNorm2d: (no subclass of it here)
        if tide.isinstance(m, nn.BatchNorm2d) then
            m.eps = 1e-3
            m.momentum = 0.03
        end
    end
end

-- a hand-built yolov5s.yaml at tiny widths in place of parse_model: layer(i, f, m) sets m.i, m.f
local NC = 3
-- anchors: - [10, 13, 16, 30, 33, 23] # P3/8;  - [30, 61, 62, 45, 59, 119] # P4/16
local ANCHORS = { { 10, 13, 16, 30, 33, 23 }, { 30, 61, 62, 45, 59, 119 } }
local function layer(i, f, m)
    m.i, m.f = i, f
    return m
end

local TinyModel = nn.Module:extend("TinyModel")
function TinyModel:init(ch, nc, anchors)
    ch, nc, anchors = ch or 3, nc or NC, anchors or ANCHORS
    self.model = nn.Sequential(
        layer(0, -1, Conv(ch, 4, 6, 2, 2)), -- 0-P1/2
        layer(1, -1, Conv(4, 8, 3, 2)), -- 1-P2/4
        layer(2, -1, C3(8, 8, 1)),
        layer(3, -1, Conv(8, 8, 3, 2)), -- 3-P3/8
        layer(4, -1, C3(8, 8, 1)),
        layer(5, -1, Conv(8, 16, 3, 2)), -- 5-P4/16
        layer(6, -1, SPPF(16, 16, 5)),
        layer(7, -1, Conv(16, 8, 1, 1)),
        -- [-1, 1, nn.Upsample, [None, 2, "nearest"]],
        layer(8, -1, nn.Upsample({ scale_factor = 2, mode = "nearest" })),
        -- [[-1, 4], 1, Concat, [1]],  # cat backbone P3
        layer(9, { -1, 4 }, Concat(2)),
        layer(10, -1, C3(16, 8, 1, false)), -- 10 (P3/8-small)
        layer(11, -1, Conv(8, 8, 3, 2)),
        layer(12, { -1, 7 }, Concat(2)), -- cat head P4
        layer(13, -1, C3(16, 16, 1, false)), -- 13 (P4/16-medium)
        layer(14, { 10, 13 }, Detect(nc, anchors, { 8, 16 })) -- Detect(P3, P4)
    )
    self.save = { [4] = true, [7] = true, [10] = true, [13] = true }
    -- m = self.model[-1]  # Detect()
    local m = self.model[-1]
    -- s = 256  # 2x min stride (64 here: the smallest input both strides divide, and fast)
    local s = 64
    -- m.stride = torch.tensor([s / x.shape[-2] for x in _forward(torch.zeros(1, ch, s, s))])
    local strides = {}
    for i, x in ipairs(self:forward(tide.zeros(1, ch, s, s))) do strides[i] = s / x:size(-2) end
    m.stride = tide.tensor(strides)
    check_anchor_order(m)
    -- m.anchors /= m.stride.view(-1, 1, 1)
    m.anchors:div_(m.stride:view(-1, 1, 1))
    self.stride = m.stride
    initialize_weights(self)
end

-- BaseModel._forward_once(self, x, profile=False):
function TinyModel:forward(x)
    local y = {} -- outputs (keyed by the yaml's 0-based layer numbers)
    -- for m in self.model:
    for k = 1, #self.model do
        local m = self.model[k]
        if m.f ~= -1 then -- if not from previous layer
            -- x = y[m.f] if isinstance(m.f, int) else [x if j == -1 else y[j] for j in m.f]
            if type(m.f) == "number" then
                x = y[m.f]
            else
                local xs = {}
                for n, j in ipairs(m.f) do xs[n] = j == -1 and x or y[j] end
                x = xs
            end
        end
        x = m(x) -- run
        -- y.append(x if m.i in self.save else None)  # save output
        y[m.i] = self.save[m.i] and x or nil
    end
    return x
end

-- def _initialize_biases(self, cf=None):
function TinyModel:_initialize_biases()
    local m = self.model[-1] -- Detect() module
    -- for mi, s in zip(m.m, m.stride):  # from
    for i = 1, m.nl do
        local mi, s = m.m[i], m.stride[i]:item()
        -- b = mi.bias.view(m.na, -1)  # conv.bias(255) to (3,85)
        local b = mi.bias:view(m.na, -1)
        -- b.data[:, 4] += math.log(8 / (640 / s) ** 2)  # obj (8 objects per 640 image)
        b.data[{ {}, 5 }]:add_(math.log(8 / (640 / s) ^ 2))
        -- b.data[:, 5 : 5 + m.nc] += math.log(0.6 / (m.nc - 0.99999))  # cls
        b.data[{ {}, { 6, 5 + m.nc } }]:add_(math.log(0.6 / (m.nc - 0.99999)))
        -- mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)
        mi.bias = nn.Parameter(b:view(-1), true)
    end
end

---------------------------------------------------------------------------------------------
-- 3. utils/metrics.py bbox_iou and utils/loss.py ComputeLoss
---------------------------------------------------------------------------------------------
-- def bbox_iou(box1, box2, xywh=True, GIoU=False, DIoU=False, CIoU=False, eps=1e-7):
local function bbox_iou(box1, box2, opts)
    opts = opts or {}
    local xywh = opts.xywh ~= false
    local GIoU, DIoU, CIoU, eps = opts.GIoU, opts.DIoU, opts.CIoU, opts.eps or 1e-7
    local b1_x1, b1_x2, b1_y1, b1_y2, b2_x1, b2_x2, b2_y1, b2_y2, w1, h1, w2, h2
    if xywh then -- transform from xywh to xyxy
        -- (x1, y1, w1, h1), (x2, y2, w2, h2) = box1.chunk(4, -1), box2.chunk(4, -1)
        local x1, y1, x2, y2
        x1, y1, w1, h1 = unpack4(box1:chunk(4, -1))
        x2, y2, w2, h2 = unpack4(box2:chunk(4, -1))
        local w1_, h1_, w2_, h2_ = w1 / 2, h1 / 2, w2 / 2, h2 / 2
        b1_x1, b1_x2, b1_y1, b1_y2 = x1 - w1_, x1 + w1_, y1 - h1_, y1 + h1_
        b2_x1, b2_x2, b2_y1, b2_y2 = x2 - w2_, x2 + w2_, y2 - h2_, y2 + h2_
    else -- x1, y1, x2, y2 = box1
        b1_x1, b1_y1, b1_x2, b1_y2 = unpack4(box1:chunk(4, -1))
        b2_x1, b2_y1, b2_x2, b2_y2 = unpack4(box2:chunk(4, -1))
        w1, h1 = b1_x2 - b1_x1, (b1_y2 - b1_y1):clamp(eps)
        w2, h2 = b2_x2 - b2_x1, (b2_y2 - b2_y1):clamp(eps)
    end
    -- Intersection area
    local inter = (b1_x2:minimum(b2_x2) - b1_x1:maximum(b2_x1)):clamp(0)
        * (b1_y2:minimum(b2_y2) - b1_y1:maximum(b2_y1)):clamp(0)
    -- Union Area
    local union = w1 * h1 + w2 * h2 - inter + eps
    -- IoU
    local iou = inter / union
    if CIoU or DIoU or GIoU then
        local cw = b1_x2:maximum(b2_x2) - b1_x1:minimum(b2_x1) -- convex width
        local ch = b1_y2:maximum(b2_y2) - b1_y1:minimum(b2_y1) -- convex height
        if CIoU or DIoU then -- Distance or Complete IoU https://arxiv.org/abs/1911.08287v1
            local c2 = cw ^ 2 + ch ^ 2 + eps -- convex diagonal squared
            -- rho2 = ((b2_x1 + b2_x2 - b1_x1 - b1_x2) ** 2
            --     + (b2_y1 + b2_y2 - b1_y1 - b1_y2) ** 2) / 4
            local rho2 = ((b2_x1 + b2_x2 - b1_x1 - b1_x2) ^ 2
                + (b2_y1 + b2_y2 - b1_y1 - b1_y2) ^ 2) / 4 -- center dist ** 2
            if CIoU then
                -- v = (4 / math.pi**2) * (torch.atan(w2 / h2) - torch.atan(w1 / h1)).pow(2)
                local v = (4 / math.pi ^ 2) * (tide.atan(w2 / h2) - tide.atan(w1 / h1)):pow(2)
                -- with torch.no_grad(): alpha = v / (v - iou + (1 + eps))
                local alpha = tide.no_grad(function() return v / (v - iou + (1 + eps)) end)
                return iou - (rho2 / c2 + v * alpha) -- CIoU
            end
            return iou - rho2 / c2 -- DIoU
        end
        local c_area = cw * ch + eps -- convex area
        return iou - (c_area - union) / c_area -- GIoU https://arxiv.org/pdf/1902.09630.pdf
    end
    return iou -- IoU
end

-- def smooth_bce(eps=0.1):
local function smooth_bce(eps)
    eps = eps or 0.1
    return 1.0 - 0.5 * eps, 0.5 * eps
end

-- class ComputeLoss:
local ComputeLoss = class("ComputeLoss")
ComputeLoss.sort_obj_iou = false
-- def __init__(self, model, autobalance=False):
function ComputeLoss:__init__(model, autobalance)
    local h = model.hyp -- hyperparameters
    -- BCEcls = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([h["cls_pw"]], device=device))
    local BCEcls = nn.BCEWithLogitsLoss({ pos_weight = tide.tensor({ h.cls_pw }) })
    local BCEobj = nn.BCEWithLogitsLoss({ pos_weight = tide.tensor({ h.obj_pw }) })
    -- self.cp, self.cn = smooth_bce(eps=h.get("label_smoothing", 0.0))
    self.cp, self.cn = smooth_bce(h.label_smoothing or 0.0)
    assert(h.fl_gamma == 0) -- (FocalLoss is not ported)
    local m = model.model[-1] -- Detect() module
    -- self.balance = {3: [4.0, 1.0, 0.4]}.get(m.nl, [4.0, 1.0, 0.25, 0.06, 0.02])  # P3-P7
    self.balance = m.nl == 3 and { 4.0, 1.0, 0.4 } or { 4.0, 1.0, 0.25, 0.06, 0.02 }
    self.ssi = 1 -- (autobalance's stride-16 index; autobalance is not ported)
    self.BCEcls, self.BCEobj, self.gr, self.hyp = BCEcls, BCEobj, 1.0, h
    self.autobalance = autobalance or false
    self.na = m.na -- number of anchors
    self.nc = m.nc -- number of classes
    self.nl = m.nl -- number of layers
    self.anchors = m.anchors
end

-- def __call__(self, p, targets):  # predictions, targets
function ComputeLoss:__call__(p, targets)
    local lcls = tide.zeros(1) -- class loss
    local lbox = tide.zeros(1) -- box loss
    local lobj = tide.zeros(1) -- object loss
    local tcls, tbox, indices, anchors = self:build_targets(p, targets) -- targets
    local tobj
    -- for i, pi in enumerate(p):  # layer index, layer predictions
    for i, pi in ipairs(p) do
        -- b, a, gj, gi = indices[i]  # image, anchor, gridy, gridx
        local b, a, gj, gi = unpack4(indices[i])
        -- tobj = torch.zeros(pi.shape[:4], dtype=pi.dtype, device=self.device)  # target obj
        tobj = tide.zeros({ pi:size(1), pi:size(2), pi:size(3), pi:size(4) }, { dtype = pi.dtype })
        -- if n := b.shape[0]:
        local n = b:size(1)
        if n > 0 then
            -- pxy, pwh, _, pcls = pi[b, a, gj, gi].split((2, 2, 1, self.nc), 1)
            local pxy, pwh, _, pcls = unpack4(pi[{ b, a, gj, gi }]:split({ 2, 2, 1, self.nc }, 2))
            -- Regression
            pxy = pxy:sigmoid() * 2 - 0.5
            -- pwh = (pwh.sigmoid() * 2) ** 2 * anchors[i]
            pwh = (pwh:sigmoid() * 2) ^ 2 * anchors[i]
            -- pbox = torch.cat((pxy, pwh), 1)  # predicted box
            local pbox = tide.cat({ pxy, pwh }, 2)
            -- iou = bbox_iou(pbox, tbox[i], CIoU=True).squeeze()  # iou(prediction, target)
            local iou = bbox_iou(pbox, tbox[i], { CIoU = true }):squeeze()
            -- lbox += (1.0 - iou).mean()  # iou loss
            lbox = lbox + (1.0 - iou):mean()
            -- Objectness
            -- iou = iou.detach().clamp(0).type(tobj.dtype)
            iou = iou:detach():clamp(0):type(tobj.dtype)
            assert(not self.sort_obj_iou and self.gr == 1) -- (those branches are not taken)
            -- tobj[b, a, gj, gi] = iou  # iou ratio
            tobj[{ b, a, gj, gi }] = iou
            -- Classification
            if self.nc > 1 then -- cls loss (only if multiple classes)
                -- t = torch.full_like(pcls, self.cn, device=self.device)  # targets
                local t = tide.full_like(pcls, self.cn)
                -- t[range(n), tcls[i]] = self.cp
                t[{ tide.arange(1, n + 1), tcls[i] }] = self.cp
                -- lcls += self.BCEcls(pcls, t)  # BCE
                lcls = lcls + self.BCEcls(pcls, t)
            end
        end
        -- obji = self.BCEobj(pi[..., 4], tobj)
        local obji = self.BCEobj(pi[{ "...", 5 }], tobj)
        -- lobj += obji * self.balance[i]  # obj loss
        lobj = lobj + obji * self.balance[i]
    end
    -- lbox *= self.hyp["box"]
    lbox = lbox * self.hyp.box
    lobj = lobj * self.hyp.obj
    lcls = lcls * self.hyp.cls
    -- bs = tobj.shape[0]  # batch size
    local bs = tobj:size(1)
    -- return (lbox + lobj + lcls) * bs, torch.cat((lbox, lobj, lcls)).detach()
    return (lbox + lobj + lcls) * bs, tide.cat({ lbox, lobj, lcls }):detach()
end

-- def build_targets(self, p, targets):  (targets: image, class, x, y, w, h; ids 1-based)
function ComputeLoss:build_targets(p, targets)
    -- na, nt = self.na, targets.shape[0]  # number of anchors, targets
    local na, nt = self.na, targets:size(1)
    local tcls, tbox, indices, anch = {}, {}, {}, {}
    local gain = tide.ones(7) -- normalized to gridspace gain
    -- ai = torch.arange(na, device=self.device).float().view(na, 1).repeat(1, nt)
    local ai = tide.arange(1, na + 1):float():view(na, 1)
    ai = ai["repeat"](ai, 1, nt) -- same as .repeat_interleave(nt)
    -- targets = torch.cat((targets.repeat(na, 1, 1), ai[..., None]), 2)  # append anchor indices
    targets = tide.cat({ targets["repeat"](targets, na, 1, 1), ai[{ "...", tide.newaxis }] }, 3)

    local g = 0.5 -- bias
    -- off = torch.tensor([[0, 0], [1, 0], [0, 1], [-1, 0], [0, -1]], ...).float() * g  # offsets
    local off = tide.tensor({ { 0, 0 }, { 1, 0 }, { 0, 1 }, { -1, 0 }, { 0, -1 } }):float() * g

    -- for i in range(self.nl):
    for i = 1, self.nl do
        -- anchors, shape = self.anchors[i], p[i].shape
        local anchors, shape = self.anchors[i], p[i].shape
        -- gain[2:6] = torch.tensor(shape)[[3, 2, 3, 2]]  # xyxy gain
        gain[{ { 3, 6 } }] = tide.tensor(shape)[tide.tensor({ 4, 3, 4, 3 })]

        -- Match targets to anchors
        local t = targets * gain -- shape(3,n,7)
        local offsets
        if nt > 0 then
            -- Matches
            -- r = t[..., 4:6] / anchors[:, None]  # wh ratio
            local r = t[{ "...", { 5, 6 } }] / anchors[{ {}, tide.newaxis }]
            -- j = torch.max(r, 1 / r).max(2)[0] < self.hyp["anchor_t"]  # compare
            local j = tide.max(r, 1 / r):max(3):lt(self.hyp.anchor_t)
            t = t[j] -- filter

            -- Offsets
            -- gxy = t[:, 2:4]  # grid xy
            local gxy = t[{ {}, { 3, 4 } }]
            -- gxi = gain[[2, 3]] - gxy  # inverse
            local gxi = gain[tide.tensor({ 3, 4 })] - gxy
            -- j, k = ((gxy % 1 < g) & (gxy > 1)).T
            local jk = ((gxy % 1):lt(g)):logical_and(gxy:gt(1)).T
            local k
            j, k = jk[1], jk[2]
            -- l, m = ((gxi % 1 < g) & (gxi > 1)).T
            local lm = ((gxi % 1):lt(g)):logical_and(gxi:gt(1)).T
            local l, m = lm[1], lm[2]
            -- j = torch.stack((torch.ones_like(j), j, k, l, m))
            j = tide.stack({ tide.ones_like(j), j, k, l, m })
            -- t = t.repeat((5, 1, 1))[j]
            t = t["repeat"](t, { 5, 1, 1 })[j]
            -- offsets = (torch.zeros_like(gxy)[None] + off[:, None])[j]
            offsets = (tide.zeros_like(gxy)[{ tide.newaxis }] + off[{ {}, tide.newaxis }])[j]
        else
            t = targets[1]
            offsets = 0
        end

        -- Define
        -- bc, gxy, gwh, a = t.chunk(4, 1)  # (image, class), grid xy, grid wh, anchors
        local bc, gxy, gwh, a = unpack4(t:chunk(4, 2))
        -- a, (b, c) = a.long().view(-1), bc.long().T  # anchors, image, class
        a = a:long():view(-1)
        local b, c = unpack4(bc:long().T:unbind(1))
        local gij = (gxy - offsets):long()
        -- gi, gj = gij.T  # grid indices
        local gi, gj = unpack4(gij.T:unbind(1))

        -- Append (the grid cells as 1-based indices)
        -- indices.append((b, a, gj.clamp_(0, shape[2] - 1), gi.clamp_(0, shape[3] - 1)))
        indices[#indices + 1] = { b, a, gj:clamp(0, shape[3] - 1) + 1,
            gi:clamp(0, shape[4] - 1) + 1 }
        -- tbox.append(torch.cat((gxy - gij, gwh), 1))  # box
        tbox[#tbox + 1] = tide.cat({ gxy - gij, gwh }, 2)
        anch[#anch + 1] = anchors[a] -- anchors
        tcls[#tcls + 1] = c -- class
    end
    return tcls, tbox, indices, anch
end

-- hyp.scratch-low.yaml's loss entries (label_smoothing 0.1 so cp/cn are exercised)
local HYP = { box = 0.05, cls = 0.5, cls_pw = 1.0, obj = 1.0, obj_pw = 1.0, anchor_t = 4.0,
    fl_gamma = 0.0, label_smoothing = 0.1 }
-- (image, class, x, y, w, h), normalized xywh; image and class 1-based (YOLO's files: 0-based)
local TARGETS = { { 1, 2, 0.30, 0.40, 0.25, 0.35 }, { 1, 3, 0.70, 0.62, 0.50, 0.40 },
    { 2, 1, 0.52, 0.47, 0.12, 0.20 } }

local function check_out(what, y, ref)
    assert.same(ref[1], y.shape)
    assert_close_list({ ref[2] }, { y:sum():item() }, 1e-4, what .. " sum")
    assert_close_list(ref[3], flat(y, #ref[3]), 1e-4, what)
end

local function plus(list, d)
    local out = {}
    for i, v in ipairs(list) do out[i] = v + d end
    return out
end

describe("ultralytics/yolov5 models/common.py blocks", function()
    it("autopad pads to 'same', with dilation and per-dim kernels", function()
        assert.equal(1, autopad(3))
        assert.equal(2, autopad(3, nil, 2))
        assert.same({ 0, 2 }, autopad({ 1, 5 }))
        assert.equal(0, autopad(3, 0))
    end)

    it("Conv, DWConv, Bottleneck, C3, SPPF and Focus match PyTorch (eval)", function()
        local blocks = {
            { "conv", Conv(3, 4, 3, 2), { 2, 3, 32, 32 } },
            { "dwconv", DWConv(4, 4, 3, 1), { 2, 4, 8, 8 } },
            { "bottleneck", Bottleneck(4, 4), { 2, 4, 8, 8 } },
            { "c3", C3(4, 8, 2), { 2, 4, 8, 8 } },
            { "sppf", SPPF(8, 4, 5), { 2, 8, 8, 8 } },
            { "focus", Focus(3, 4, 3), { 2, 3, 8, 8 } },
        }
        for _, e in ipairs(blocks) do
            local name, blk = e[1], e[2]
            det_init(blk)
            initialize_weights(blk)
            blk:eval()
            check_out(name, blk(fixed(e[3])), REF[name])
        end
        -- DWConv's groups are gcd(c1, c2); SiLU is shared by every Conv (a class attribute)
        assert.equal(4, DWConv(4, 8, 3).conv.groups)
        assert.equal(Conv(1, 1).act, Conv(2, 2).act)
        assert.is_true(tide.isinstance(Conv(1, 1, 1, 1, nil, 1, 1, false).act, nn.Identity))
    end)
end)

describe("ultralytics/yolov5 models/yolo.py Detect and utils/loss.py ComputeLoss", function()
    local model, x
    setup(function()
        model = TinyModel()
        det_init(model)
        model:_initialize_biases()
        model.hyp = HYP
        x = fixed({ 2, 3, 32, 32 })
    end)

    it("sets strides and divides the anchors by them; init's BN eps/momentum", function()
        assert.same({ 8, 16 }, model.stride:tolist())
        assert_close_list(REF.anchors, flat(model.model[-1].anchors), 1e-6, "anchors")
        assert.same({ 2, 3, 2 }, model.model[-1].anchors.shape)
        assert.equal(1e-3, model.model[1].bn.eps)
        assert.equal(0.03, model.model[1].bn.momentum)
        assert.equal(88, #model:named_parameters())
    end)

    it("Detect's training outputs and eval decode, grids and anchor grids match PyTorch", function()
        model:eval()
        model.model[-1]:train()
        local p = model(x)
        assert.equal(2, #p)
        for i = 1, 2 do check_out("train " .. i, p[i], REF.train[i]) end
        model.model[-1]:eval()
        local out = model(x)
        local z = out[1]
        assert.same({ 2, 60, 8 }, z.shape)
        assert.equal(2, #out[2])
        assert_close_list({ REF.z_sum }, { z:sum():item() }, 1e-4, "z sum")
        assert_close_list(REF.z_first, flat(z[{ 1, { 1, 2 } }]), 1e-4, "z[0, :2]")
        assert_close_list(REF.z_last, flat(z[{ 2, -1 }]), 1e-4, "z[1, -1]")
        local d = model.model[-1]
        for i = 1, 2 do
            assert.same({ 1, 3, 6 - 2 * i, 6 - 2 * i, 2 }, d.grid[i].shape)
            assert_close_list(REF.grid[i], flat(d.grid[i][{ 1, 1 }], 8), 0, "grid")
            assert_close_list({ REF.anchor_grid_sum[i] }, { d.anchor_grid[i]:sum():item() }, 1e-6,
                "anchor_grid sum")
            assert_close_list(REF.anchor_grid[i], flat(d.anchor_grid[i][{ 1, {}, 1, 1 }]), 1e-6,
                "anchor_grid")
        end
        -- export mode returns the cat alone
        d.export = true
        assert.equal(1, #model(x))
        d.export = false
    end)

    it("bbox_iou: IoU, GIoU, DIoU, CIoU on fixed boxes match PyTorch", function()
        local b1 = tide.tensor({ { 0.5, 0.5, 0.4, 0.3 }, { 1.0, 1.2, 0.8, 0.5 },
            { 0.2, 0.3, 0.1, 0.3 } })
        local b2 = tide.tensor({ { 0.6, 0.45, 0.3, 0.35 }, { 1.5, 1.0, 0.6, 0.9 },
            { 0.9, 0.9, 0.1, 0.1 } })
        assert_close_list(REF.iou, flat(bbox_iou(b1, b2)), 1e-5, "iou")
        assert_close_list(REF.giou, flat(bbox_iou(b1, b2, { GIoU = true })), 1e-5, "giou")
        assert_close_list(REF.diou, flat(bbox_iou(b1, b2, { DIoU = true })), 1e-5, "diou")
        assert_close_list(REF.ciou, flat(bbox_iou(b1, b2, { CIoU = true })), 1e-5, "ciou")
        assert_close_list(REF.ciou_xyxy, flat(bbox_iou(b1, b2 + 0.5, { xywh = false,
            CIoU = true })), 1e-5, "ciou xyxy")
    end)

    it("build_targets, the loss and 2 SGD steps match PyTorch", function()
        model:train()
        local cl = ComputeLoss(model)
        local targets = tide.tensor(TARGETS)
        local p = model(x)
        local tcls, tbox, indices, anch = cl:build_targets(p, targets)
        for i = 1, 2 do
            local ref = REF.bt[i]
            for k = 1, 4 do assert.same(plus(ref[k], 1), indices[i][k]:tolist()) end
            assert.same(plus(ref[5], 1), tcls[i]:tolist())
            assert_close_list(ref[6], flat(tbox[i], #ref[6]), 1e-5, "tbox")
            assert_close_list(ref[7], flat(anch[i], #ref[7]), 1e-6, "anch")
        end
        local opt = tide.optim.SGD(model:parameters(), { lr = 0.01, momentum = 0.937,
            nesterov = true })
        for step = 1, 2 do
            p = model(x)
            local loss, items = cl(p, targets)
            assert_finite(loss:item(), "loss")
            assert_close_list({ REF.loss[step] }, { loss:item() }, 1e-4, "loss " .. step)
            if step == 1 then assert_close_list(REF.loss_items, items:tolist(), 1e-4, "items") end
            if step == 2 then break end
            opt:zero_grad()
            loss:backward()
            opt:step()
        end
    end)
end)
