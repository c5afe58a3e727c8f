-- ported_scripts76_spec.lua — pytorch/tutorials intermediate_source/
-- custom_function_conv_bn_tutorial.py ("Fusing Convolution and Batch Norm using Custom
-- Function": convolution_backward, the Conv2D and BatchNorm autograd.Functions with gradcheck,
-- FusedConvBN2DFunction, the FusedConvBN module and the MNIST Net trained fused and unfused),
-- ported line for line at tiny sizes on random data, and PyTorch 1.13's torch/nn/grad.py
-- (conv1d/2d/3d_input and _weight, tide.nn.grad) whose values are checked against PyTorch's.
-- The tutorial's first versions wrote convolution_backward with torch.nn.grad; its current one
-- with F.conv2d / F.conv_transpose2d: the port uses nn.grad and checks it against those lines.
-- The Python line stands above each Lua line that differs from it. Dims are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local autograd = tide.autograd

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- the deterministic values both sides fill in: f(arange(n) * a + k) in shape (float64)
local function det(shape, k, f, a)
    local n = 1
    for _, s in ipairs(shape) do
        n = n * s
    end
    local t = tide.arange(n, { dtype = "float64" }):mul(a or 0.37):add(k)
    return (f == "cos" and t:cos() or t:sin()):view(shape)
end

-- g's sum and its sum weighted by sin(0, 1, 2, ...) over its flattened entries: a checksum of
-- every value (and of their order) to compare with PyTorch's
local function sums(g)
    local n = g:numel()
    local wts = tide.arange(n, { dtype = "float64" }):sin()
    return { g:sum():item(), (g:flatten() * wts):sum():item() }
end

local function max_diff(a, b)
    return (a - b):abs():max():item()
end

---------------------------------------------------------------------------------------------
-- 1. torch.nn.grad (PyTorch 1.13's torch/nn/grad.py)
---------------------------------------------------------------------------------------------
describe("ported_scripts76: torch.nn.grad", function()
    -- PyTorch 1.13: torch.nn.grad.convNd_input(x.shape, w, go, **kw) and
    -- torch.nn.grad.convNd_weight(x, w.shape, go, **kw), x = det(xs, 0.1), w = det(ws, 0.2),
    -- go = det(y.shape, 0.3, cos, 0.53) for y = F.convNd(x, w, None, **kw)
    local CASES = {
        { "conv1d", { 2, 4, 7 }, { 6, 2, 3 }, { 2, 1, 1, 2 },
            { 19.9264463139736, -1.19544394490921 }, { 0.16457157613797, -0.486243543351975 } },
        { "conv2d", { 1, 2, 5, 6 }, { 3, 2, 2, 3 }, { { 2, 1 }, { 1, 0 }, { 1, 2 }, 1 },
            { 0.807737620641771, 0.506335925836507 }, { -3.51632320561785, -6.0824994785294 } },
        { "conv3d", { 1, 2, 4, 4, 4 }, { 2, 1, 2, 2, 2 }, { 1, 1, 2, 2 },
            { 0.0734865937891139, 25.6408824169383 }, { 3.00323626264252, -0.65440357213841 } },
        -- stride 2: input 6x6 and 5x5 both give 2x2; input_size picks 6x6 (last row zero)
        { "conv2d", { 1, 1, 6, 6 }, { 1, 1, 3, 3 }, { 2, 0, 1, 1 },
            { 8.20797313065758, 2.28483093658584 }, { -0.0406980277325241, 1.35941820609699 } },
    }

    it("gives PyTorch 1.13's values for strides, padding, dilation and groups", function()
        for i, c in ipairs(CASES) do
            local name, xs, ws, kw = c[1], c[2], c[3], c[4]
            local x, w = det(xs, 0.1), det(ws, 0.2)
            local o = { stride = kw[1], padding = kw[2], dilation = kw[3], groups = kw[4] }
            local y = F[name](x, w, nil, o)
            local go = det(y.shape, 0.3, "cos", 0.53)
            -- positionally, as PyTorch's
            local gi = nn.grad[name .. "_input"](xs, w, go, kw[1], kw[2], kw[3], kw[4])
            -- by name, with the shape a tensor gives
            local gw = nn.grad[name .. "_weight"](x, w.shape, go, o)
            assert.same(xs, gi.shape)
            assert.same(ws, gw.shape)
            assert_close_list(c[5], sums(gi), 1e-10, "case " .. i .. " input")
            assert_close_list(c[6], sums(gw), 1e-10, "case " .. i .. " weight")
            -- the gradients autograd gives the convolution itself
            local xl, wl = x:clone():requires_grad_(), w:clone():requires_grad_()
            F[name](xl, wl, nil, o):backward(go)
            assert.is_true(max_diff(gi, xl.grad) < 1e-12 and max_diff(gw, wl.grad) < 1e-12)
            assert.is_false(gi.requires_grad or gw.requires_grad)
        end
        local gi = nn.grad.conv2d_input({ 1, 1, 6, 6 }, det({ 1, 1, 3, 3 }, 0.2),
            det({ 1, 1, 2, 2 }, 0.3, "cos", 0.53), { stride = 2 })
        assert.equal(0, gi:select(3, 6):abs():sum():item() + gi:select(4, 6):abs():sum():item())
    end)

    it("raises tide: errors naming the function and the values", function()
        local x, w = det({ 2, 4, 5, 5 }, 0.1), det({ 6, 2, 3, 3 }, 0.2)
        local go = det({ 2, 6, 3, 3 }, 0.3)
        local function err(pat, f, ...)
            local ok, msg = pcall(f, ...)
            assert.is_false(ok)
            assert.truthy(tostring(msg):find(pat, 1, true), tostring(msg))
        end
        err('tide: conv2d_input: unknown option "strid" (did you mean "stride"?)',
            nn.grad.conv2d_input, x.shape, w, go, { strid = 2, groups = 2 })
        err("tide: conv2d_input: expected input_size of 4 sizes {N, C_in, H, W}, got {2, 4, 5}",
            nn.grad.conv2d_input, { 2, 4, 5 }, w, go, 2, 1, 1, 2)
        err("tide: conv3d_weight: expected weight_size of 5 sizes {C_out, C_in / groups, " ..
            "kD, kH, kW}, got {6, 2, 3, 3}", nn.grad.conv3d_weight, det({ 1, 4, 3, 3, 3 }, 0),
            w.shape, go)
        err("tide: conv2d_input: expected input_size to hold integers >= 0, got 2.5 at 3",
            nn.grad.conv2d_input, { 2, 4, 2.5, 5 }, w, go)
        err("tide: conv1d_weight: expected input with 3 dims, got {2, 4, 5, 5}",
            nn.grad.conv1d_weight, x, { 6, 2, 3 }, go)
        err("tide: conv2d_weight: expected input to be a tensor, got nil",
            nn.grad.conv2d_weight, nil, w.shape, go)
        -- groups 1: the convolution's own check, named as the function's
        err("tide: conv2d_input: expected input with 2 channels (dim 2, as weight {6, 2, 3, 3})",
            nn.grad.conv2d_input, x.shape, w, go)
        err("tide: conv2d_input: grad_output has shape {2, 6, 3, 3}, but the convolution of " ..
            "input {2, 4, 5, 5} with weight {6, 2, 3, 3} gives {2, 6, 5, 5}",
            nn.grad.conv2d_input, x.shape, w, go, 1, 1, 1, 2)
        err("tide: conv2d_input: stride given twice, as argument #4 and by name",
            nn.grad.conv2d_input, x.shape, w, go, 2, { stride = 2 })
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. custom_function_conv_bn_tutorial.py
---------------------------------------------------------------------------------------------
-- from torch.autograd.function import once_differentiable
local Function = autograd.Function
local once_differentiable = Function.once_differentiable

-- def convolution_backward(grad_out, X, weight):
local function convolution_backward(grad_out, X, weight)
    -- grad_input = torch.nn.grad.conv2d_weight(X, weight.shape, grad_out)
    local grad_input = nn.grad.conv2d_weight(X, weight.shape, grad_out)
    -- grad_X = torch.nn.grad.conv2d_input(X.shape, weight, grad_out)
    local grad_X = nn.grad.conv2d_input(X.shape, weight, grad_out)
    return grad_X, grad_input
end

-- class Conv2D(torch.autograd.Function):
local Conv2D = Function:extend("Conv2D")
-- def forward(ctx, X, weight):
function Conv2D.forward(ctx, X, weight)
    ctx:save_for_backward(X, weight)
    return F.conv2d(X, weight)
end
-- @once_differentiable
-- def backward(ctx, grad_out):
Conv2D.backward = once_differentiable(function(ctx, grad_out)
    -- X, weight = ctx.saved_tensors
    local X, weight = ctx.saved_tensors[1], ctx.saved_tensors[2]
    return convolution_backward(grad_out, X, weight)
end)

-- def unsqueeze_all(t):
local function unsqueeze_all(t)
    -- Helper function to unsqueeze all the dimensions that we reduce over
    -- return t[None, :, None, None]
    return t:view(1, -1, 1, 1)
end

-- def batch_norm_backward(grad_out, X, sum, sqrt_var, N, eps):
local function batch_norm_backward(grad_out, X, sum, sqrt_var, N, eps)
    -- tmp = -((X - unsqueeze_all(sum) / N) * grad_out).sum(dim=(0, 2, 3))
    local tmp = -((X - unsqueeze_all(sum) / N) * grad_out):sum({ dim = { 1, 3, 4 } })
    -- d_denom = tmp / (sqrt_var + eps)**2  # d_denom = -num / denom**2
    local d_denom = tmp / (sqrt_var + eps) ^ 2
    -- d_var = d_denom / (2 * sqrt_var)  # denom = torch.sqrt(var) + eps
    local d_var = d_denom / (2 * sqrt_var)
    local d_mean_dx = grad_out / unsqueeze_all(sqrt_var + eps)
    -- d_mean_dx = unsqueeze_all(-d_mean_dx.sum(dim=(0, 2, 3)) / N)
    d_mean_dx = unsqueeze_all(-d_mean_dx:sum({ dim = { 1, 3, 4 } }) / N)
    -- (1) unbiased_var(x) = ((X - unsqueeze_all(mean))**2).sum(dim=(0, 2, 3)) / (N - 1)
    local grad_input = X * unsqueeze_all(d_var * N)
    -- grad_input += unsqueeze_all(-d_var * sum)
    grad_input:add_(unsqueeze_all(-d_var * sum))
    -- grad_input *= 2 / ((N - 1) * N)
    grad_input:mul_(2 / ((N - 1) * N))
    -- (2) mean (see above)
    -- grad_input += d_mean_dx
    grad_input:add_(d_mean_dx)
    -- (3) Add 'grad_out / <factor>' without allocating an extra buffer
    -- grad_input *= unsqueeze_all(sqrt_var + eps)
    grad_input:mul_(unsqueeze_all(sqrt_var + eps))
    -- grad_input += grad_out
    grad_input:add_(grad_out)
    -- grad_input /= unsqueeze_all(sqrt_var + eps)  # sqrt_var + eps > 0!
    grad_input:div_(unsqueeze_all(sqrt_var + eps))
    return grad_input
end

-- class BatchNorm(torch.autograd.Function):
local BatchNorm = Function:extend("BatchNorm")
-- def forward(ctx, X, eps=1e-3):
function BatchNorm.forward(ctx, X, eps)
    eps = eps or 1e-3
    -- Don't save keepdim'd values for backward
    -- sum = X.sum(dim=(0, 2, 3))
    local sum = X:sum({ dim = { 1, 3, 4 } })
    -- var = X.var(unbiased=True, dim=(0, 2, 3))
    local var = X:var({ unbiased = true, dim = { 1, 3, 4 } })
    -- N = X.numel() / X.size(1)
    local N = X:numel() / X:size(2)
    -- sqrt_var = torch.sqrt(var)
    local sqrt_var = tide.sqrt(var)
    ctx:save_for_backward(X)
    ctx.eps = eps
    ctx.sum = sum
    ctx.N = N
    ctx.sqrt_var = sqrt_var
    local mean = sum / N
    local denom = sqrt_var + eps
    return (X - unsqueeze_all(mean)) / unsqueeze_all(denom)
end
-- @once_differentiable
-- def backward(ctx, grad_out):
BatchNorm.backward = once_differentiable(function(ctx, grad_out)
    -- X, = ctx.saved_tensors
    local X = ctx.saved_tensors[1]
    return batch_norm_backward(grad_out, X, ctx.sum, ctx.sqrt_var, ctx.N, ctx.eps)
end)

-- class FusedConvBN2DFunction(torch.autograd.Function):
local FusedConvBN2DFunction = Function:extend("FusedConvBN2DFunction")
-- def forward(ctx, X, conv_weight, eps=1e-3):
function FusedConvBN2DFunction.forward(ctx, X, conv_weight, eps)
    eps = eps or 1e-3
    -- assert X.ndim == 4  # N, C, H, W
    assert(X.ndim == 4)
    -- (1) Only need to save this single buffer for backward!
    ctx:save_for_backward(X, conv_weight)

    -- (2) Exact same Conv2D forward from example above
    X = F.conv2d(X, conv_weight)
    -- (3) Exact same BatchNorm2D forward from example above
    -- sum = X.sum(dim=(0, 2, 3))
    local sum = X:sum({ dim = { 1, 3, 4 } })
    -- var = X.var(unbiased=True, dim=(0, 2, 3))
    local var = X:var({ unbiased = true, dim = { 1, 3, 4 } })
    -- N = X.numel() / X.size(1)
    local N = X:numel() / X:size(2)
    -- sqrt_var = torch.sqrt(var)
    local sqrt_var = tide.sqrt(var)
    ctx.eps = eps
    ctx.sum = sum
    ctx.N = N
    ctx.sqrt_var = sqrt_var
    local mean = sum / N
    local denom = sqrt_var + eps
    -- Try to do as many things in-place as possible
    local out = X - unsqueeze_all(mean)
    -- out /= unsqueeze_all(denom)
    out:div_(unsqueeze_all(denom))
    return out
end
-- def backward(ctx, grad_out):
function FusedConvBN2DFunction.backward(ctx, grad_out)
    -- X, conv_weight, = ctx.saved_tensors
    local X, conv_weight = ctx.saved_tensors[1], ctx.saved_tensors[2]
    -- (4) Batch norm backward
    -- (5) We need to recompute conv
    local X_conv_out = F.conv2d(X, conv_weight)
    grad_out = batch_norm_backward(grad_out, X_conv_out, ctx.sum, ctx.sqrt_var,
        ctx.N, ctx.eps)
    -- (6) Conv2d backward
    local grad_X, grad_input = convolution_backward(grad_out, X, conv_weight)
    -- return grad_X, grad_input, None, None, None, None, None
    return grad_X, grad_input, nil, nil, nil, nil, nil
end

-- class FusedConvBN(nn.Module):
local FusedConvBN = nn.Module:extend("FusedConvBN")
-- def __init__(self, in_channels, out_channels, kernel_size, exp_avg_factor=0.1,
--              eps=1e-3, device=None, dtype=None):
function FusedConvBN:init(in_channels, out_channels, kernel_size, exp_avg_factor, eps, device,
                          dtype)
    -- super(FusedConvBN, self).__init__()
    nn.Module.init(self)
    -- factory_kwargs = {'device': device, 'dtype': dtype}
    local factory_kwargs = { device = device, dtype = dtype }
    -- Conv parameters
    -- weight_shape = (out_channels, in_channels, kernel_size, kernel_size)
    local weight_shape = { out_channels, in_channels, kernel_size, kernel_size }
    -- self.conv_weight = nn.Parameter(torch.empty(*weight_shape, **factory_kwargs))
    self.conv_weight = nn.Parameter(tide.empty(weight_shape, factory_kwargs))
    -- Batch norm parameters
    local num_features = out_channels
    self.num_features = num_features
    -- self.eps = eps
    self.eps = eps or 1e-3
    -- Initialize
    self:reset_parameters()
end
-- def forward(self, X):
function FusedConvBN:forward(X)
    -- return FusedConvBN2DFunction.apply(X, self.conv_weight, self.eps)
    return FusedConvBN2DFunction.apply(X, self.conv_weight, self.eps)
end
-- def reset_parameters(self) -> None:
function FusedConvBN:reset_parameters()
    -- nn.init.kaiming_uniform_(self.conv_weight, a=math.sqrt(5))
    nn.init.kaiming_uniform_(self.conv_weight, { a = math.sqrt(5) })
end

-- class Net(nn.Module): (tiny: 1x8x8 images, 4 and 8 channels, fc1 32 -> 16)
local Net = nn.Module:extend("Net")
-- def __init__(self, fused=True):
function Net:init(fused)
    -- super(Net, self).__init__()
    nn.Module.init(self)
    if fused == nil then fused = true end
    self.fused = fused
    if fused then
        -- self.convbn1 = FusedConvBN(1, 32, 3)
        self.convbn1 = FusedConvBN(1, 4, 3)
        -- self.convbn2 = FusedConvBN(32, 64, 3)
        self.convbn2 = FusedConvBN(4, 8, 3)
    else
        -- self.conv1 = nn.Conv2d(1, 32, 3, 1, bias=False)
        self.conv1 = nn.Conv2d(1, 4, 3, 1, { bias = false })
        -- self.bn1 = nn.BatchNorm2d(32, affine=False, track_running_stats=False)
        self.bn1 = nn.BatchNorm2d(4, { affine = false, track_running_stats = false })
        -- self.conv2 = nn.Conv2d(32, 64, 3, 1, bias=False)
        self.conv2 = nn.Conv2d(4, 8, 3, 1, { bias = false })
        -- self.bn2 = nn.BatchNorm2d(64, affine=False, track_running_stats=False)
        self.bn2 = nn.BatchNorm2d(8, { affine = false, track_running_stats = false })
    end
    -- self.fc1 = nn.Linear(9216, 128)
    self.fc1 = nn.Linear(32, 16)
    self.dropout = nn.Dropout(0.5)
    -- self.fc2 = nn.Linear(128, 10)
    self.fc2 = nn.Linear(16, 10)
end
-- def forward(self, x):
function Net:forward(x)
    if self.fused then
        x = self.convbn1(x)
    else
        x = self.conv1(x)
        x = self.bn1(x)
    end
    x = F.relu(x)
    if self.fused then
        x = self.convbn2(x)
    else
        x = self.conv2(x)
        x = self.bn2(x)
    end
    x = F.relu(x)
    x = F.max_pool2d(x, 2)
    x = F.relu(x)
    -- x = x.flatten(1)
    x = x:flatten(2)
    x = self.fc1(x)
    x = self.dropout(x)
    x = F.relu(x)
    x = self.fc2(x)
    -- output = F.log_softmax(x, dim=1)
    local output = F.log_softmax(x, { dim = 2 })
    return output
end

-- def train(model, device, train_loader, optimizer, epoch): (returns the losses)
local function train(model, device, train_loader, optimizer, epoch)
    local losses = {}
    model:train()
    -- for batch_idx, (data, target) in enumerate(train_loader):
    for batch_idx, data, target in train_loader:enumerate(0) do
        data, target = data:to(device), target:to(device)
        optimizer:zero_grad()
        local output = model(data)
        local loss = F.nll_loss(output, target)
        loss:backward()
        optimizer:step()
        -- if batch_idx % 2 == 0: print('Train Epoch: ...'.format(epoch, ..., loss.item()))
        losses[batch_idx + 1] = loss:item()
    end
    return losses
end

-- def test(model, device, test_loader): (returns the average loss and the correct count)
local function test(model, device, test_loader)
    model:eval()
    local test_loss = 0
    local correct = 0
    -- Use inference mode instead of no_grad, for free improved test-time performance
    -- with torch.inference_mode():
    tide.inference_mode(function()
        -- for data, target in test_loader:
        for data, target in test_loader:iter() do
            data, target = data:to(device), target:to(device)
            local output = model(data)
            -- sum up batch loss
            -- test_loss += F.nll_loss(output, target, reduction='sum').item()
            test_loss = test_loss + F.nll_loss(output, target, { reduction = "sum" }):item()
            -- get the index of the max log-probability
            -- pred = output.argmax(dim=1, keepdim=True)
            local pred = output:argmax({ dim = 2, keepdim = true })
            -- correct += pred.eq(target.view_as(pred)).sum().item()
            correct = correct + pred:eq(target:view_as(pred)):sum():item()
        end
    end)
    -- test_loss /= len(test_loader.dataset)
    -- (dataset:len(): Lua 5.1 and LuaJIT read no __len on a table)
    test_loss = test_loss / test_loader.dataset:len()
    return test_loss, correct
end

describe("ported_scripts76: custom_function_conv_bn_tutorial", function()
    it("convolution_backward through nn.grad equals the tutorial's F.conv2d lines", function()
        local X, weight = det({ 2, 3, 5, 5 }, 0.1), det({ 4, 3, 3, 3 }, 0.2)
        local grad_out = det({ 2, 4, 3, 3 }, 0.3, "cos", 0.53)
        local grad_X, grad_input = convolution_backward(grad_out, X, weight)
        -- grad_input = F.conv2d(X.transpose(0, 1), grad_out.transpose(0, 1)).transpose(0, 1)
        local want_w = F.conv2d(X:transpose(1, 2), grad_out:transpose(1, 2)):transpose(1, 2)
        -- grad_X = F.conv_transpose2d(grad_out, weight)
        local want_x = F.conv_transpose2d(grad_out, weight)
        assert.is_true(max_diff(grad_X, want_x) < 1e-12)
        assert.is_true(max_diff(grad_input, want_w) < 1e-12)
    end)

    it("gradchecks Conv2D and BatchNorm (float64)", function()
        tide.manual_seed(0)
        -- weight = torch.rand(5, 3, 3, 3, requires_grad=True, dtype=torch.double)
        local weight = tide.rand({ 3, 2, 2, 2 }, { requires_grad = true, dtype = "float64" })
        -- X = torch.rand(10, 3, 7, 7, requires_grad=True, dtype=torch.double)
        local X = tide.rand({ 2, 2, 4, 4 }, { requires_grad = true, dtype = "float64" })
        -- torch.autograd.gradcheck(Conv2D.apply, (X, weight))
        assert.is_true(autograd.gradcheck(Conv2D.apply, { X, weight }))
        -- a = torch.rand(1, 2, 3, 4, requires_grad=True, dtype=torch.double)
        local a = tide.rand({ 1, 2, 3, 4 }, { requires_grad = true, dtype = "float64" })
        -- torch.autograd.gradcheck(BatchNorm.apply, (a,), fast_mode=False)
        assert.is_true(autograd.gradcheck(BatchNorm.apply, { a }, { fast_mode = false }))
        -- a wrong formula fails it: the check can fail
        local Wrong = Function:extend("Wrong")
        Wrong.forward = Conv2D.forward
        function Wrong.backward(ctx, g)
            local gx, gw = Conv2D.backward(ctx, g)
            return gx * 1.01, gw
        end
        assert.is_false(autograd.gradcheck(Wrong.apply, { X, weight },
            { raise_exception = false }))
    end)

    it("fused forward and backward: PyTorch's values, the unfused ones, gradcheck", function()
        -- PyTorch 1.13 on X = det((2,3,4,4), 0.1), w = det((5,3,3,3), 0.2), go = det(out, 0.3,
        -- cos, 0.53)
        local X = det({ 2, 3, 4, 4 }, 0.1):requires_grad_()
        local w = det({ 5, 3, 3, 3 }, 0.2):requires_grad_()
        local out = FusedConvBN2DFunction.apply(X, w)
        local go = det(out.shape, 0.3, "cos", 0.53)
        out:backward(go)
        assert_close_list({ 1.11022302462516e-16, -4.95610598459174 }, sums(out), 1e-10, "out")
        assert_close_list({ -4.55191440096314e-15, -11.007765293904 }, sums(X.grad), 1e-10, "gX")
        assert_close_list({ 1.38729047267139, -0.709412032522184 }, sums(w.grad), 1e-10, "gw")
        -- the unfused pair of custom Functions gives the same output and gradients
        local X2, w2 = X:detach():requires_grad_(), w:detach():requires_grad_()
        local out2 = BatchNorm.apply(Conv2D.apply(X2, w2))
        out2:backward(go)
        assert.is_true(max_diff(out, out2) < 1e-12)
        assert.is_true(max_diff(X.grad, X2.grad) < 1e-12 and max_diff(w.grad, w2.grad) < 1e-12)
        -- and autograd through tide's own ops on the tutorial's formula
        local X3, w3 = X:detach():requires_grad_(), w:detach():requires_grad_()
        local y = F.conv2d(X3, w3)
        local sd = y:var({ unbiased = true, dim = { 1, 3, 4 } }):sqrt()
        local out3 = (y - unsqueeze_all(y:mean({ dim = { 1, 3, 4 } }))) / unsqueeze_all(sd + 1e-3)
        out3:backward(go)
        assert.is_true(max_diff(X.grad, X3.grad) < 1e-10 and max_diff(w.grad, w3.grad) < 1e-10)

        tide.manual_seed(1)
        -- weight = torch.rand(5, 3, 3, 3, requires_grad=True, dtype=torch.double)
        local weight = tide.rand({ 3, 2, 2, 2 }, { requires_grad = true, dtype = "float64" })
        -- X = torch.rand(2, 3, 4, 4, requires_grad=True, dtype=torch.double)
        local Xg = tide.rand({ 2, 2, 3, 3 }, { requires_grad = true, dtype = "float64" })
        -- torch.autograd.gradcheck(FusedConvBN2DFunction.apply, (X, weight))
        assert.is_true(autograd.gradcheck(FusedConvBN2DFunction.apply, { Xg, weight }))
    end)

    it("trains the Net fused and unfused: the same losses, finite and falling", function()
        -- the MNIST loaders: 8 random 1x8x8 images in one batch (train and test)
        -- transforms.Normalize((0.1307,), (0.3081,))
        tide.manual_seed(7)
        local images = (tide.rand({ 8, 1, 8, 8 }) - 0.1307) / 0.3081
        local labels = tide.randint(1, 11, { 8 })
        local dataset1 = tide.data.TensorDataset(images, labels)
        -- train_loader = torch.utils.data.DataLoader(dataset1, **train_kwargs)
        local train_loader = tide.data.DataLoader(dataset1, { batch_size = 8 })
        local test_loader = tide.data.DataLoader(dataset1, { batch_size = 8 })
        local device = "cpu"
        local runs = {}
        -- for fused in (True, False):
        for _, fused in ipairs({ true, false }) do
            tide.manual_seed(123456)
            -- torch.cuda.reset_peak_memory_stats(): the memory measurement is skipped (CPU)
            -- model = Net(fused=fused).to(device)
            local model = Net(fused):to(device)
            -- optimizer = optim.Adadelta(model.parameters(), lr=1.0)
            local optimizer = optim.Adadelta(model:parameters(), { lr = 1.0 })
            -- scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
            local scheduler = optim.lr_scheduler.StepLR(optimizer, { step_size = 1, gamma = 0.7 })
            local run = { train = {}, test = {},
                w1 = (fused and model.convbn1.conv_weight or model.conv1.weight):clone() }
            -- for epoch in range(2):
            for epoch = 0, 1 do
                local losses = train(model, device, train_loader, optimizer, epoch)
                run.train[#run.train + 1] = losses[1]
                run.test[#run.test + 1] = test(model, device, test_loader)
                scheduler:step()
            end
            -- mems.append(torch.cuda.max_memory_allocated(device=None) / 1024**3): skipped
            runs[#runs + 1] = run
        end
        local f, u = runs[1], runs[2]
        -- the same seed gives both nets the same weights (kaiming_uniform_ either way)
        assert.is_true(max_diff(f.w1, u.w1) == 0)
        for i = 1, 2 do
            assert_finite(f.train[i], "fused train loss")
            assert_finite(f.test[i], "fused test loss")
            -- nn.BatchNorm2d divides by sqrt(biased var + 1e-5), the tutorial's by
            -- sqrt(unbiased var) + 1e-3: close, not equal
            assert.is_true(ported.close(f.train[i], u.train[i], 5e-3),
                string.format("train %d: fused %.6g unfused %.6g", i, f.train[i], u.train[i]))
            assert.is_true(ported.close(f.test[i], u.test[i], 5e-3),
                string.format("test %d: fused %.6g unfused %.6g", i, f.test[i], u.test[i]))
        end
        -- the eval-mode loss on the training batch falls (the train losses see new dropout
        -- masks each step)
        assert.is_true(f.test[2] < f.test[1] and u.test[2] < u.test[1])
    end)
end)
