-- ported_scripts105_spec.lua — the Fourier Neural Operator (zongyi-li/fourier_neural_operator,
-- commit e12ed83d: fourier_1d.py's SpectralConv1d / FNO1d, fourier_2d.py's SpectralConv2d / FNO2d,
-- utilities3.py's LpLoss) and FNet (rishikksh20/FNet-pytorch fnet.py: FNetBlock, PreNorm,
-- FeedForward, FNet), ported line for line at tiny sizes (width 8, modes 4, grids of 16 and
-- 8 x 8; FNet dim 8, depth 2, seq 6) on tide's complex tensors and tide.fft. The Python line
-- stands above each Lua line that differs from it; dims are 1-based.
-- The values were computed with PyTorch 1.13 on the same weights: every parameter, in
-- named_parameters order (k = 0, 1, ...), is 0.3 * sin(0.731 * arange(numel) + 1.37 * k) in its
-- shape; a complex weight takes the formula on its view_as_real ([..., 2]). The spectral
-- weights are complex nn.Parameters, as the repo's.
-- The training loop is fourier_1d.py's with torch.optim.Adam (lr 1e-3, weight_decay 1e-4) in
-- place of the repo's Adam.py (see the GAP: note at the loop).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local fft = tide.fft

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

local REF = {
    sc1 = { 0.0442225, 0.0502938, 0.0480229, 0.0362875, 0.0181167, -0.0004306, -0.0146632,
            -0.0243161, -0.043498, 7.665048, 7.664369 },
    sc2 = { 1.1761569, -0.6150165, -0.7810404, 0.7851021, 1.1619133, 1.5267055, 1.6146653,
            1.4749038, -4.800435, 976.339478, 976.348755 },
    fno1 = {
        out = { 0.2366331, 0.23677, 0.2368755, 0.2369552, 0.2370544, 0.2372122, 0.2374229,
                0.2376387, 7.58708, 7.58708, 0.011892 },
        shape = { 2, 16, 1 },
        losses = { 1.9819674, 1.9684694 },
        w_conv0 = { 0.1154252, -0.095047, -0.2636676, -0.2911177, -0.1721187, 0.0315319,
                -0.695876, 97.036575, 97.03212 },
        w_conv3 = { 0.767344, 96.919785, 96.91378 },
        fc0 = { 0.255694, 2.99225, 2.99225 },
        w0 = { 0.136456, 12.174586, 12.170323 },
        fc2 = { -0.180663, 24.391117, 24.39394 },
        after = -0.827695,
    },
    fno2 = {
        out = { 0.4599409, 0.4593767, 0.4586975, 0.4583128, 0.4586476, 0.459665, 0.4608514,
                0.4616863, 58.845856, 58.845856, 0.12386 },
        shape = { 2, 8, 8, 1 },
        losses = { 2.3691382, 2.2949252 },
        w_conv0 = { 0.1191514, -0.095047, -0.259861, -0.293331, -0.17221, 0.0353711, -0.066155,
                388.067322, 388.067444 },
        w_conv3 = { -0.564482, 388.581909, 388.582886 },
        w2_conv1 = { 0.544066, 387.818115, 387.81781 },
        fc0 = { 0.42745, 4.480636, 4.480636 },
        w0 = { 0.683609, 12.242937, 12.242937 },
        fc2 = { -0.263835, 24.357262, 24.349018 },
        after = -1.026459,
    },
    fnet_block = { 2.5600395, -0.946573, -0.5776738, -0.5220432, -0.5107671, -0.5220432,
            -0.5776738, -0.946573, 52.462914, 185.078064, 193.892914 },
    fnet_out = { 0.5993018, 5.8375874, 2.3779407, 2.8149049, 2.4986215, 2.2396181, 1.819018,
            6.0112829, 53.712868, 145.853897, 139.035736 },
    fnet_losses = { 4.1164532, 3.377142 },
    fnet_after = { { 0.176159, 1.510604, 1.510604 }, { -0.087166, 1.420365, 1.420365 },
            { -0.167599, 1.437035, 1.437035 }, { 0.063613, 1.638694, 1.638694 }, { 0.408309,
            24.498739, 24.492359 }, { 0.093913, 2.937533, 2.925794 }, { 0.010641, 23.864126,
            23.864458 }, { -0.113378, 1.55618, 1.55618 }, { 0.107847, 1.391448, 1.391448 },
            { 0.169515, 1.575794, 1.575794 }, { -0.013618, 1.482462, 1.479058 }, { -0.167751,
            1.33928, 1.323354 }, { -0.056022, 24.595461, 24.595461 }, { 0.345144, 2.662418,
            2.630056 }, { -0.217672, 24.100918, 24.097517 }, { -0.21282, 1.45783, 1.405693 } },
}

-- every parameter, in named_parameters order, from the formula above (a complex weight on its
-- view_as_real)
local function fill(model)
    tide.no_grad(function()
        for k, np_ in ipairs(model:named_parameters()) do
            local p = np_[2]
            if p:is_complex() then
                p = tide.view_as_real(p)
            end
            local v = (tide.arange(p:numel()):float() * 0.731 + 1.37 * (k - 1)):sin() * 0.3
            p:copy_(v:view(p.shape))
        end
    end)
end

-- torch.sin(a * torch.arange(n).float() + b)
local function seq(n, a, b)
    return (tide.arange(n):float() * a + b):sin()
end

-- the checks: the first values, then sum, abs sum and abs sum about the mean
local function summary(t, n)
    local f = t:detach():flatten():tolist()
    local out = {}
    for i = 1, n or 0 do out[i] = f[i] end
    local d = t:detach()
    out[#out + 1] = d:sum():item()
    out[#out + 1] = d:abs():sum():item()
    out[#out + 1] = (d - d:mean()):abs():sum():item()
    return out
end

---------------------------------------------------------------------------------------------
-- 1. fourier_1d.py
---------------------------------------------------------------------------------------------
-- class SpectralConv1d(nn.Module):
local SpectralConv1d = nn.Module:extend("SpectralConv1d")
-- def __init__(self, in_channels, out_channels, modes1):
function SpectralConv1d:init(in_channels, out_channels, modes1)
    nn.Module.init(self)
    self.in_channels = in_channels
    self.out_channels = out_channels
    self.modes1 = modes1 -- Number of Fourier modes to multiply, at most floor(N/2) + 1

    self.scale = (1 / (in_channels * out_channels))
    -- self.weights1 = nn.Parameter(self.scale * torch.rand(in_channels, out_channels,
    --     self.modes1, dtype=torch.cfloat))
    self.weights1 = nn.Parameter(self.scale * tide.rand(in_channels, out_channels, self.modes1,
        { dtype = tide.cfloat }))
end

-- Complex multiplication
function SpectralConv1d:compl_mul1d(input, weights)
    -- (batch, in_channel, x ), (in_channel, out_channel, x) -> (batch, out_channel, x)
    return tide.einsum("bix,iox->box", input, weights)
end

function SpectralConv1d:forward(x)
    local batchsize = x.shape[1]
    -- Compute Fourier coeffcients up to factor of e^(- something constant)
    -- x_ft = torch.fft.rfft(x)
    local x_ft = fft.rfft(x)

    -- Multiply relevant Fourier modes
    -- out_ft = torch.zeros(batchsize, self.out_channels, x.size(-1)//2 + 1,  (// is 5.3+)
    --     device=x.device, dtype=torch.cfloat)
    local out_ft = tide.zeros(batchsize, self.out_channels, math.floor(x:size(-1) / 2) + 1,
        { device = x.device, dtype = tide.cfloat })
    -- out_ft[:, :, :self.modes1] = self.compl_mul1d(x_ft[:, :, :self.modes1], self.weights1)
    out_ft[{ {}, {}, { 1, self.modes1 } }] = self:compl_mul1d(
        x_ft[{ {}, {}, { 1, self.modes1 } }], self.weights1)

    -- Return to physical space
    -- x = torch.fft.irfft(out_ft, n=x.size(-1))
    x = fft.irfft(out_ft, { n = x:size(-1) })
    return x
end

-- class FNO1d(nn.Module):
local FNO1d = nn.Module:extend("FNO1d")
function FNO1d:init(modes, width)
    nn.Module.init(self)
    self.modes1 = modes
    self.width = width
    self.padding = 2 -- pad the domain if input is non-periodic
    self.fc0 = nn.Linear(2, self.width) -- input channel is 2: (a(x), x)

    self.conv0 = SpectralConv1d(self.width, self.width, self.modes1)
    self.conv1 = SpectralConv1d(self.width, self.width, self.modes1)
    self.conv2 = SpectralConv1d(self.width, self.width, self.modes1)
    self.conv3 = SpectralConv1d(self.width, self.width, self.modes1)
    self.w0 = nn.Conv1d(self.width, self.width, 1)
    self.w1 = nn.Conv1d(self.width, self.width, 1)
    self.w2 = nn.Conv1d(self.width, self.width, 1)
    self.w3 = nn.Conv1d(self.width, self.width, 1)

    self.fc1 = nn.Linear(self.width, 128)
    self.fc2 = nn.Linear(128, 1)
end

function FNO1d:forward(x)
    local grid = self:get_grid(x.shape, x.device)
    -- x = torch.cat((x, grid), dim=-1)
    x = tide.cat({ x, grid }, -1)
    x = self.fc0(x)
    -- x = x.permute(0, 2, 1)
    x = x:permute(1, 3, 2)

    local x1 = self.conv0(x)
    local x2 = self.w0(x)
    x = x1 + x2
    x = F.gelu(x)

    x1 = self.conv1(x)
    x2 = self.w1(x)
    x = x1 + x2
    x = F.gelu(x)

    x1 = self.conv2(x)
    x2 = self.w2(x)
    x = x1 + x2
    x = F.gelu(x)

    x1 = self.conv3(x)
    x2 = self.w3(x)
    x = x1 + x2

    -- x = x.permute(0, 2, 1)
    x = x:permute(1, 3, 2)
    x = self.fc1(x)
    x = F.gelu(x)
    x = self.fc2(x)
    return x
end

function FNO1d:get_grid(shape, device)
    local batchsize, size_x = shape[1], shape[2]
    -- gridx = torch.tensor(np.linspace(0, 1, size_x), dtype=torch.float)
    local gridx = tide.linspace(0, 1, size_x, { dtype = "float64" }):float()
    -- gridx = gridx.reshape(1, size_x, 1).repeat([batchsize, 1, 1])
    -- (repeat is a Lua keyword: the method by its name)
    gridx = gridx:reshape(1, size_x, 1)
    gridx = gridx["repeat"](gridx, { batchsize, 1, 1 })
    return gridx:to(device)
end

---------------------------------------------------------------------------------------------
-- 2. fourier_2d.py
---------------------------------------------------------------------------------------------
-- class SpectralConv2d(nn.Module):
local SpectralConv2d = nn.Module:extend("SpectralConv2d")
function SpectralConv2d:init(in_channels, out_channels, modes1, modes2)
    nn.Module.init(self)
    self.in_channels = in_channels
    self.out_channels = out_channels
    self.modes1 = modes1 -- Number of Fourier modes to multiply, at most floor(N/2) + 1
    self.modes2 = modes2

    self.scale = (1 / (in_channels * out_channels))
    -- self.weights1 = nn.Parameter(self.scale * torch.rand(in_channels, out_channels,
    --     self.modes1, self.modes2, dtype=torch.cfloat))
    self.weights1 = nn.Parameter(self.scale * tide.rand(in_channels, out_channels, self.modes1,
        self.modes2, { dtype = tide.cfloat }))
    self.weights2 = nn.Parameter(self.scale * tide.rand(in_channels, out_channels, self.modes1,
        self.modes2, { dtype = tide.cfloat }))
end

-- Complex multiplication
function SpectralConv2d:compl_mul2d(input, weights)
    -- (batch, in_channel, x,y ), (in_channel, out_channel, x,y) -> (batch, out_channel, x,y)
    return tide.einsum("bixy,ioxy->boxy", input, weights)
end

function SpectralConv2d:forward(x)
    local batchsize = x.shape[1]
    -- Compute Fourier coeffcients up to factor of e^(- something constant)
    local x_ft = fft.rfft2(x)

    -- Multiply relevant Fourier modes
    -- out_ft = torch.zeros(batchsize, self.out_channels,  x.size(-2), x.size(-1)//2 + 1,
    --     dtype=torch.cfloat, device=x.device)
    local out_ft = tide.zeros(batchsize, self.out_channels, x:size(-2),
        math.floor(x:size(-1) / 2) + 1, { dtype = tide.cfloat, device = x.device })
    local m1, m2 = self.modes1, self.modes2
    -- out_ft[:, :, :self.modes1, :self.modes2] = \
    --     self.compl_mul2d(x_ft[:, :, :self.modes1, :self.modes2], self.weights1)
    out_ft[{ {}, {}, { 1, m1 }, { 1, m2 } }] =
        self:compl_mul2d(x_ft[{ {}, {}, { 1, m1 }, { 1, m2 } }], self.weights1)
    -- out_ft[:, :, -self.modes1:, :self.modes2] = \
    --     self.compl_mul2d(x_ft[:, :, -self.modes1:, :self.modes2], self.weights2)
    out_ft[{ {}, {}, { -m1, -1 }, { 1, m2 } }] =
        self:compl_mul2d(x_ft[{ {}, {}, { -m1, -1 }, { 1, m2 } }], self.weights2)

    -- Return to physical space
    -- x = torch.fft.irfft2(out_ft, s=(x.size(-2), x.size(-1)))
    x = fft.irfft2(out_ft, { s = { x:size(-2), x:size(-1) } })
    return x
end

-- class FNO2d(nn.Module):
local FNO2d = nn.Module:extend("FNO2d")
function FNO2d:init(modes1, modes2, width)
    nn.Module.init(self)
    self.modes1 = modes1
    self.modes2 = modes2
    self.width = width
    self.padding = 9 -- pad the domain if input is non-periodic
    self.fc0 = nn.Linear(3, self.width) -- input channel is 3: (a(x, y), x, y)

    self.conv0 = SpectralConv2d(self.width, self.width, self.modes1, self.modes2)
    self.conv1 = SpectralConv2d(self.width, self.width, self.modes1, self.modes2)
    self.conv2 = SpectralConv2d(self.width, self.width, self.modes1, self.modes2)
    self.conv3 = SpectralConv2d(self.width, self.width, self.modes1, self.modes2)
    self.w0 = nn.Conv2d(self.width, self.width, 1)
    self.w1 = nn.Conv2d(self.width, self.width, 1)
    self.w2 = nn.Conv2d(self.width, self.width, 1)
    self.w3 = nn.Conv2d(self.width, self.width, 1)

    self.fc1 = nn.Linear(self.width, 128)
    self.fc2 = nn.Linear(128, 1)
end

function FNO2d:forward(x)
    local grid = self:get_grid(x.shape, x.device)
    x = tide.cat({ x, grid }, -1)
    x = self.fc0(x)
    -- x = x.permute(0, 3, 1, 2)
    x = x:permute(1, 4, 2, 3)
    -- x = F.pad(x, [0,self.padding, 0,self.padding])
    x = F.pad(x, { 0, self.padding, 0, self.padding })

    local x1 = self.conv0(x)
    local x2 = self.w0(x)
    x = x1 + x2
    x = F.gelu(x)

    x1 = self.conv1(x)
    x2 = self.w1(x)
    x = x1 + x2
    x = F.gelu(x)

    x1 = self.conv2(x)
    x2 = self.w2(x)
    x = x1 + x2
    x = F.gelu(x)

    x1 = self.conv3(x)
    x2 = self.w3(x)
    x = x1 + x2

    -- x = x[..., :-self.padding, :-self.padding]
    x = x[{ "...", { 1, -self.padding - 1 }, { 1, -self.padding - 1 } }]
    -- x = x.permute(0, 2, 3, 1)
    x = x:permute(1, 3, 4, 2)
    x = self.fc1(x)
    x = F.gelu(x)
    x = self.fc2(x)
    return x
end

function FNO2d:get_grid(shape, device)
    local batchsize, size_x, size_y = shape[1], shape[2], shape[3]
    local gridx = tide.linspace(0, 1, size_x, { dtype = "float64" }):float()
    gridx = gridx:reshape(1, size_x, 1, 1)
    gridx = gridx["repeat"](gridx, { batchsize, 1, size_y, 1 })
    local gridy = tide.linspace(0, 1, size_y, { dtype = "float64" }):float()
    gridy = gridy:reshape(1, 1, size_y, 1)
    gridy = gridy["repeat"](gridy, { batchsize, size_x, 1, 1 })
    -- return torch.cat((gridx, gridy), dim=-1).to(device)
    return tide.cat({ gridx, gridy }, -1):to(device)
end

---------------------------------------------------------------------------------------------
-- 3. utilities3.py: LpLoss (relative L2)
---------------------------------------------------------------------------------------------
-- class LpLoss(object):
local LpLoss = ported.class("LpLoss")
-- def __init__(self, d=2, p=2, size_average=True, reduction=True):
function LpLoss:__init__(opts)
    opts = opts or {}
    local d, p = opts.d or 2, opts.p or 2
    -- assert d > 0 and p > 0
    assert(d > 0 and p > 0)
    self.d = d
    self.p = p
    self.reduction = opts.reduction ~= false
    self.size_average = opts.size_average ~= false
end

function LpLoss:rel(x, y)
    local num_examples = x:size(1)
    -- diff_norms = torch.norm(x.reshape(num_examples,-1) - y.reshape(num_examples,-1),
    --     self.p, 1)
    local diff_norms = tide.norm(x:reshape(num_examples, -1) - y:reshape(num_examples, -1),
        self.p, 2)
    -- y_norms = torch.norm(y.reshape(num_examples,-1), self.p, 1)
    local y_norms = tide.norm(y:reshape(num_examples, -1), self.p, 2)

    if self.reduction then
        if self.size_average then
            return tide.mean(diff_norms / y_norms)
        else
            return tide.sum(diff_norms / y_norms)
        end
    end
    return diff_norms / y_norms
end

-- def __call__(self, x, y): return self.rel(x, y)
function LpLoss:__call__(x, y)
    return self:rel(x, y)
end

-- the training loop of fourier_1d.py / fourier_2d.py, 2 steps on one batch
-- GAP: the repo's own Adam.py (a copy of torch's functional adam) steps a complex parameter
-- with exp_avg_sq += |g|^2 (addcmul_(grad, grad.conj())), one second moment per complex entry;
-- torch.optim.Adam (and tide's) steps the complex parameter's view_as_real: one per real component.
-- The port (and the reference) use torch.optim.Adam(lr=1e-3, weight_decay=1e-4).
local function train(model, x, y, steps)
    -- optimizer = Adam(model.parameters(), lr=learning_rate, weight_decay=1e-4)
    local optimizer = tide.optim.Adam(model:parameters(), { lr = 1e-3, weight_decay = 1e-4 })
    -- myloss = LpLoss(size_average=False)
    local myloss = LpLoss({ size_average = false })
    local batch_size = x:size(1)
    local out0
    local losses = {}
    for _ = 1, steps do
        optimizer:zero_grad()
        local out = model(x)
        out0 = out0 or out:detach():clone()
        -- l2 = myloss(out.view(batch_size, -1), y.view(batch_size, -1))
        local l2 = myloss(out:view(batch_size, -1), y:view(batch_size, -1))
        l2:backward()
        optimizer:step()
        losses[#losses + 1] = l2:item()
    end
    return out0, losses
end

-- the sum of every parameter (view_as_real for the complex ones)
local function param_sum(model)
    local s = 0
    for _, p in ipairs(model:parameters()) do
        p = p:is_complex() and tide.view_as_real(p) or p
        s = s + p:detach():sum():item()
    end
    return s
end

describe("zongyi-li/fourier_neural_operator", function()
    it("SpectralConv1d: rfft, einsum on the modes, the slice write, irfft as PyTorch's", function()
        local sc = SpectralConv1d(8, 8, 4)
        assert.same({ 8, 8, 4 }, sc.weights1.shape)
        assert.equal("complex64", sc.weights1.dtype)
        fill(sc)
        local xs = seq(2 * 8 * 16, 0.37, 0.5):view(2, 8, 16)
        local o = sc(xs)
        assert.same({ 2, 8, 16 }, o.shape)
        assert.equal("float32", o.dtype)
        assert_close_list(REF.sc1, summary(o, 8), 1e-4, "SpectralConv1d")
    end)

    it("SpectralConv2d: rfft2, both corner writes (:m1 and -m1:), irfft2 with s", function()
        local sc = SpectralConv2d(8, 8, 4, 4)
        fill(sc)
        local xs = seq(2 * 8 * 8 * 8, 0.37, 0.5):view(2, 8, 8, 8)
        local o = sc(xs)
        assert.same({ 2, 8, 8, 8 }, o.shape)
        assert_close_list(REF.sc2, summary(o, 8), 1e-4, "SpectralConv2d")
    end)

    local cases = {
        { "FNO1d", function() return FNO1d(4, 8) end, { 2, 16, 1 }, { 2, 16 }, REF.fno1 },
        { "FNO2d", function() return FNO2d(4, 4, 8) end, { 2, 8, 8, 1 }, { 2, 8, 8 }, REF.fno2 },
    }
    for _, c in ipairs(cases) do
        local name, make, xshape, yshape, ref = c[1], c[2], c[3], c[4], c[5]
        it(name .. ": outputs, LpLoss, and the weights after 2 Adam steps as PyTorch's", function()
            local model = make()
            fill(model)
            local n = 1
            for _, s in ipairs(xshape) do n = n * s end
            local x = seq(n, 0.41, 0.2):view(xshape)
            local y = seq(n, 0.23, 1.1):view(yshape)
            local out0, losses = train(model, x, y, 2)
            assert.same(ref.shape, out0.shape)
            assert_close_list(ref.out, summary(out0, 8), 1e-4, name .. " output")
            assert_close_list(ref.losses, losses, 1e-5, name .. " losses")
            assert.is_true(losses[2] < losses[1])
            assert_close_list(ref.w_conv0, summary(tide.view_as_real(model.conv0.weights1), 6),
                1e-4, "conv0.w1")
            assert_close_list(ref.w_conv3, summary(tide.view_as_real(model.conv3.weights1)), 1e-4,
                "conv3.w1")
            if ref.w2_conv1 then
                assert_close_list(ref.w2_conv1, summary(tide.view_as_real(model.conv1.weights2)),
                    1e-4, "conv1.w2")
            end
            assert_close_list(ref.fc0, summary(model.fc0.weight), 1e-4, "fc0")
            assert_close_list(ref.w0, summary(model.w0.weight), 1e-4, "w0")
            assert_close_list(ref.fc2, summary(model.fc2.weight), 1e-4, "fc2")
            assert_close_list({ ref.after }, { param_sum(model) }, 1e-4, "all parameters")
            assert_finite(out0, name)
        end)
    end
end)

---------------------------------------------------------------------------------------------
-- 4. rishikksh20/FNet-pytorch fnet.py
---------------------------------------------------------------------------------------------
-- class FeedForward(nn.Module):
local FeedForward = nn.Module:extend("FeedForward")
function FeedForward:init(dim, hidden_dim, dropout)
    nn.Module.init(self)
    dropout = dropout or 0
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

-- class PreNorm(nn.Module):
local PreNorm = nn.Module:extend("PreNorm")
function PreNorm:init(dim, fn)
    nn.Module.init(self)
    self.norm = nn.LayerNorm(dim)
    self.fn = fn
end
-- def forward(self, x, **kwargs): return self.fn(self.norm(x), **kwargs)
function PreNorm:forward(x, ...)
    return self.fn(self.norm(x), ...)
end

-- class FNetBlock(nn.Module):
local FNetBlock = nn.Module:extend("FNetBlock")
function FNetBlock:init()
    nn.Module.init(self)
end
function FNetBlock:forward(x)
    -- x = torch.fft.fft(torch.fft.fft(x, dim=-1), dim=-2).real
    x = fft.fft(fft.fft(x, { dim = -1 }), { dim = -2 }).real
    return x
end

-- class FNet(nn.Module):
local FNet = nn.Module:extend("FNet")
function FNet:init(dim, depth, mlp_dim, dropout)
    nn.Module.init(self)
    dropout = dropout or 0
    self.layers = nn.ModuleList({})
    for _ = 1, depth do
        self.layers:append(nn.ModuleList({
            PreNorm(dim, FNetBlock()),
            PreNorm(dim, FeedForward(dim, mlp_dim, dropout))
        }))
    end
end
function FNet:forward(x)
    -- for attn, ff in self.layers:
    for _, l in ipairs(self.layers) do
        local attn, ff = l[1], l[2]
        x = attn(x) + x
        x = ff(x) + x
    end
    return x
end

describe("rishikksh20/FNet-pytorch fnet.py", function()
    it("FNetBlock: fft over the hidden dim, then the sequence, real part", function()
        local x = seq(2 * 6 * 8, 0.29, 0.1):view(2, 6, 8)
        local b = FNetBlock()(x)
        assert.same({ 2, 6, 8 }, b.shape)
        assert.equal("float32", b.dtype)
        assert_close_list(REF.fnet_block, summary(b, 8), 1e-4, "FNetBlock")
    end)

    it("FNet(8, depth 2, mlp 16): output and 2 Adam steps as PyTorch's", function()
        local net = FNet(8, 2, 16)
        assert.equal(16, #net:parameters())
        fill(net)
        local x = seq(2 * 6 * 8, 0.29, 0.1):view(2, 6, 8)
        local y = seq(2 * 6 * 8, 0.17, 0.4):view(2, 6, 8)
        local opt = tide.optim.Adam(net:parameters(), { lr = 1e-2 })
        local losses = {}
        for s = 1, 2 do
            opt:zero_grad()
            local out = net(x)
            if s == 1 then
                assert_close_list(REF.fnet_out, summary(out, 8), 1e-4, "FNet output")
            end
            local loss = F.mse_loss(out, y)
            loss:backward()
            opt:step()
            losses[s] = loss:item()
        end
        assert_close_list(REF.fnet_losses, losses, 1e-5, "FNet losses")
        assert.is_true(losses[2] < losses[1])
        for i, p in ipairs(net:parameters()) do
            assert_close_list(REF.fnet_after[i], summary(p), 1e-4, "FNet parameter " .. i)
        end
    end)
end)
