-- ported_scripts13_spec.lua — PyTorch tutorials ported line for line: intermediate_source's
-- parametrizations.py (nn.utils.parametrize: Symmetric, Skew, CayleyMap, MatrixExponential,
-- right_inverse, cached(), PruningParametrization, remove_parametrizations),
-- custom_function_double_backward_tutorial (autograd.Function saving inputs, outputs and
-- intermediate results returned as extra outputs, a backward that is itself a Function;
-- gradcheck / gradgradcheck) and custom_function_conv_bn_tutorial.py (Conv2D, BatchNorm and the
-- fused conv + batch norm as Functions with hand-written backwards, once_differentiable,
-- gradcheck, and the fused and unfused MNIST nets trained a few steps on random data). The
-- Python line stands above each Lua line that differs from it; dims and indices are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

---------------------------------------------------------------------------------------------
-- 1. intermediate_source/parametrizations.py
---------------------------------------------------------------------------------------------
describe("parametrizations.py", function()
    -- import torch.nn.utils.parametrize as parametrize
    local parametrize = nn.utils.parametrize

    -- def symmetric(X):
    local function symmetric(X)
        -- return X.triu() + X.triu(1).transpose(-1, -2)
        return X:triu() + X:triu(1):transpose(-1, -2)
    end

    -- class Symmetric(nn.Module):
    local Symmetric = nn.Module:extend("Symmetric")
    function Symmetric:forward(X)
        return X:triu() + X:triu(1):transpose(-1, -2)
    end

    -- class Skew(nn.Module):  (the version with right_inverse, defined later in the tutorial)
    local Skew = nn.Module:extend("Skew")
    function Skew:forward(X)
        local A = X:triu(1)
        return A - A:transpose(-1, -2)
    end
    function Skew:right_inverse(A)
        -- We assume that A is skew-symmetric
        return A:triu(1)
    end

    -- class CayleyMap(nn.Module):
    local CayleyMap = nn.Module:extend("CayleyMap")
    function CayleyMap:init(n)
        -- self.register_buffer("Id", torch.eye(n))
        self:register_buffer("Id", tide.eye(n))
    end
    function CayleyMap:forward(X)
        -- (I + X)(I - X)^{-1}
        -- return torch.solve(self.Id + X, self.Id - X).solution
        -- (torch.solve is removed in PyTorch 1.13, and raises in tide as there; the tutorial
        -- now reads torch.linalg.solve(self.Id - X, self.Id + X))
        return tide.linalg.solve(self.Id - X, self.Id + X)
    end
    function CayleyMap:right_inverse(A)
        -- (X - I)(X + I)^{-1}
        -- return torch.solve(X - self.Id, self.Id + X).solution
        -- (torch.solve removed, as above; the tutorial's line also reads the global X for A)
        return tide.linalg.solve(A + self.Id, A - self.Id)
    end

    -- class MatrixExponential(nn.Module):
    local MatrixExponential = nn.Module:extend("MatrixExponential")
    function MatrixExponential:forward(X)
        return tide.matrix_exp(X)
    end

    it("symmetric by hand, LinearSymmetric, then Symmetric and Skew as parametrizations", function()
        tide.manual_seed(0)
        -- X = torch.rand(3, 3); A = symmetric(X)
        local X = tide.rand(3, 3)
        local A = symmetric(X)
        -- assert torch.allclose(A, A.T)
        assert.is_true(tide.allclose(A, A.T))

        -- class LinearSymmetric(nn.Module):
        local LinearSymmetric = nn.Module:extend("LinearSymmetric")
        function LinearSymmetric:init(n_features)
            self.weight = nn.Parameter(tide.rand(n_features, n_features))
        end
        function LinearSymmetric:forward(x)
            local A2 = symmetric(self.weight)
            return x:matmul(A2)
        end
        local layer = LinearSymmetric(3)
        local out = layer(tide.rand(8, 3))
        assert.are.same({ 8, 3 }, out.shape)

        -- layer = nn.Linear(3, 3); parametrize.register_parametrization(layer, "weight", Symmetric())
        layer = nn.Linear(3, 3)
        parametrize.register_parametrization(layer, "weight", Symmetric())
        A = layer.weight
        assert.is_true(tide.allclose(A, A.T))

        -- cnn = nn.Conv2d(in_channels=5, out_channels=8, kernel_size=3)
        local cnn = nn.Conv2d({ in_channels = 5, out_channels = 8, kernel_size = 3 })
        parametrize.register_parametrization(cnn, "weight", Skew())
        -- print(cnn.weight[0, 1]); print(cnn.weight[2, 2])
        local k = cnn.weight[{ 1, 2 }]
        assert.is_true(tide.allclose(k, -k.T))
        k = cnn.weight[{ 3, 3 }]
        assert.is_true(tide.allclose(k, -k.T))
        -- the conv runs with the skew kernels
        assert.are.same({ 2, 8, 3, 3 }, cnn(tide.rand(2, 5, 5, 5)).shape)
    end)

    it("inspecting: parametrizations.weight[0], named_parameters, original, torch.dist", function()
        tide.manual_seed(1)
        local layer = nn.Linear(3, 3)
        parametrize.register_parametrization(layer, "weight", Symmetric())
        -- print(layer.parametrizations); print(layer.parametrizations.weight)
        assert.is_truthy(tostring(layer.parametrizations):find("ParametrizationList"))
        -- print(layer.parametrizations.weight[0])
        assert.is_true(tide.isinstance(layer.parametrizations.weight[1], Symmetric))
        -- print(dict(layer.named_parameters()))
        local names = {}
        for name, p in layer:named_parameters() do
            names[#names + 1] = name
        end
        table.sort(names)
        assert.are.same({ "bias", "parametrizations.weight.original" }, names)
        -- symmetric = Symmetric(); weight_orig = layer.parametrizations.weight.original
        local symmetric_m = Symmetric()
        local weight_orig = layer.parametrizations.weight.original
        -- print(torch.dist(layer.weight, symmetric(weight_orig)))
        assert.are.equal(0, tide.dist(layer.weight, symmetric_m(weight_orig)):item())
    end)

    it("cached(): a NoisyParametrization computed once per read, then once in all", function()
        local count = 0
        -- class NoisyParametrization(nn.Module):
        local NoisyParametrization = nn.Module:extend("NoisyParametrization")
        function NoisyParametrization:forward(X)
            -- print("Computing the Parametrization")
            count = count + 1
            return X
        end
        local layer = nn.Linear(4, 4)
        parametrize.register_parametrization(layer, "weight", NoisyParametrization())
        count = 0
        -- foo = layer.weight + layer.weight.T; bar = layer.weight.sum()
        local foo = layer.weight + layer.weight.T
        local bar = layer.weight:sum()
        assert.are.equal(3, count)
        count = 0
        -- with parametrize.cached():
        parametrize.cached(function()
            foo = layer.weight + layer.weight.T
            bar = layer.weight:sum()
        end)
        assert.are.equal(1, count)
        assert_finite(bar:item(), "bar")
        assert.is_true(tide.allclose(foo, foo.T))
    end)

    it("concatenating: Skew + CayleyMap and Skew + MatrixExponential are orthogonal, " ..
        "Symmetric + MatrixExponential SPD", function()
        tide.manual_seed(2)
        local layer = nn.Linear(3, 3)
        parametrize.register_parametrization(layer, "weight", Skew())
        parametrize.register_parametrization(layer, "weight", CayleyMap(3))
        local X = layer.weight
        -- print(torch.dist(X.T @ X, torch.eye(3)))  # X is orthogonal
        assert.is_true(tide.dist(X.T:matmul(X), tide.eye(3)):item() < 1e-5)

        local layer_orthogonal = nn.Linear(3, 3)
        parametrize.register_parametrization(layer_orthogonal, "weight", Skew())
        parametrize.register_parametrization(layer_orthogonal, "weight", MatrixExponential())
        X = layer_orthogonal.weight
        assert.is_true(tide.dist(X.T:matmul(X), tide.eye(3)):item() < 1e-5)

        local layer_spd = nn.Linear(3, 3)
        parametrize.register_parametrization(layer_spd, "weight", Symmetric())
        parametrize.register_parametrization(layer_spd, "weight", MatrixExponential())
        X = layer_spd.weight
        -- print(torch.dist(X, X.T))                        # X is symmetric
        assert.is_true(tide.dist(X, X.T):item() < 1e-5)
        -- print((torch.linalg.eigvalsh(X) > 0.).all())  # X is positive definite
        -- (Lua's > on a tensor must give a Lua boolean: the elementwise form is :gt)
        assert.is_true(tide.linalg.eigvalsh(X):gt(0.):all():item())

        -- training through the parametrization keeps the weight orthogonal
        local opt = optim.SGD(layer_orthogonal:parameters(), { lr = 0.1 })
        local x, y = tide.randn(8, 3), tide.randn(8, 3)
        local losses = {}
        for step = 1, 5 do
            opt:zero_grad()
            local loss = F.mse_loss(layer_orthogonal(x), y)
            loss:backward()
            opt:step()
            losses[step] = loss:item()
        end
        assert.is_true(losses[5] < losses[1])
        X = layer_orthogonal.weight
        assert.is_true(tide.dist(X.T:matmul(X), tide.eye(3)):item() < 1e-5)
    end)

    it("initializing with right_inverse: Skew, Skew + CayleyMap, orthogonal_ on the weight", function()
        tide.manual_seed(3)
        local layer = nn.Linear(3, 3)
        parametrize.register_parametrization(layer, "weight", Skew())
        local X = tide.rand(3, 3)
        -- X = X - X.T                             # X is now skew-symmetric
        X = X - X.T
        -- layer.weight = X                        # Initialize layer.weight to be X
        layer.weight = X
        assert.is_true(tide.dist(layer.weight, X):item() < 1e-6)

        local layer_orthogonal = nn.Linear(3, 3)
        parametrize.register_parametrization(layer_orthogonal, "weight", Skew())
        parametrize.register_parametrization(layer_orthogonal, "weight", CayleyMap(3))
        -- X = torch.empty(3, 3); nn.init.orthogonal_(X)
        X = tide.empty(3, 3)
        nn.init.orthogonal_(X)
        -- if X.det() < 0.:
        if X:det():item() < 0. then
            -- X[0].neg_()
            X[1]:neg_()
        end
        layer_orthogonal.weight = X
        -- print(torch.dist(layer_orthogonal.weight, X))  # layer_orthogonal.weight == X
        assert.is_true(tide.dist(layer_orthogonal.weight, X):item() < 1e-5)
        -- layer_orthogonal.weight = nn.init.orthogonal_(layer_orthogonal.weight)
        layer_orthogonal.weight = nn.init.orthogonal_(layer_orthogonal.weight)
        X = layer_orthogonal.weight
        assert.is_true(tide.dist(X.T:matmul(X), tide.eye(3)):item() < 1e-5)
    end)

    it("PruningParametrization (mask in __init__), remove_parametrizations both ways", function()
        tide.manual_seed(4)
        -- class PruningParametrization(nn.Module):
        local PruningParametrization = nn.Module:extend("PruningParametrization")
        -- def __init__(self, X, p_drop=0.2):
        function PruningParametrization:init(X, p_drop)
            p_drop = p_drop or 0.2
            -- mask = torch.full_like(X, 1.0 - p_drop)
            local mask = tide.full_like(X, 1.0 - p_drop)
            -- self.mask = torch.bernoulli(mask)
            self.mask = tide.bernoulli(mask)
        end
        function PruningParametrization:forward(X)
            return X * self.mask
        end
        function PruningParametrization:right_inverse(A)
            return A
        end
        local layer = nn.Linear(3, 4)
        -- X = torch.rand_like(layer.weight)
        local X = tide.rand_like(layer.weight)
        parametrize.register_parametrization(layer, "weight", PruningParametrization(layer.weight))
        layer.weight = X
        local mask = layer.parametrizations.weight[1].mask
        assert.is_true(tide.equal(layer.weight, X * mask))

        layer = nn.Linear(3, 3)
        parametrize.register_parametrization(layer, "weight", Skew())
        local skew = layer.weight:detach():clone()
        -- parametrize.remove_parametrizations(layer, "weight")
        parametrize.remove_parametrizations(layer, "weight")
        assert.is_false(parametrize.is_parametrized(layer))
        assert.is_true(tide.equal(layer.weight, skew))

        layer = nn.Linear(3, 3)
        local before = layer.weight:detach():clone()
        parametrize.register_parametrization(layer, "weight", Skew())
        -- parametrize.remove_parametrizations(layer, "weight", leave_parametrized=False)
        parametrize.remove_parametrizations(layer, "weight", { leave_parametrized = false })
        -- "After. Same as Before:" (Skew's right_inverse kept the upper triangle only)
        assert.is_true(tide.equal(layer.weight, before:triu(1)))
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. intermediate_source/custom_function_double_backward_tutorial.rst
---------------------------------------------------------------------------------------------
describe("custom_function_double_backward_tutorial", function()
    local gradcheck, gradgradcheck = tide.autograd.gradcheck, tide.autograd.gradgradcheck

    it("Square saves its input, Exp its output: gradcheck and gradgradcheck", function()
        tide.manual_seed(5)
        -- class Square(torch.autograd.Function):
        local Square = tide.autograd.Function:extend("Square")
        function Square.forward(ctx, x)
            ctx:save_for_backward(x)
            return x ^ 2
        end
        function Square.backward(ctx, grad_out)
            -- x, = ctx.saved_tensors
            local x = ctx.saved_tensors[1]
            return grad_out * 2 * x
        end
        -- x = torch.rand(3, 3, requires_grad=True, dtype=torch.double)
        local x = tide.rand(3, 3, { requires_grad = true, dtype = tide.double })
        -- torch.autograd.gradcheck(Square.apply, x)
        assert.is_true(gradcheck(Square.apply, x))
        assert.is_true(gradgradcheck(Square.apply, x))
        -- x = torch.tensor(1., requires_grad=True).clone(); out = Square.apply(x)
        x = tide.tensor(1., { requires_grad = true }):clone()
        local out = Square.apply(x)
        -- grad_x, = torch.autograd.grad(out, x, create_graph=True)
        local grad_x = tide.autograd.grad(out, x, { create_graph = true })[1]
        assert.are.equal(2, grad_x:item())
        assert.is_not_nil(grad_x.grad_fn)

        -- class Exp(torch.autograd.Function):
        local Exp = tide.autograd.Function:extend("Exp")
        function Exp.forward(ctx, x_)
            local result = tide.exp(x_)
            ctx:save_for_backward(result)
            return result
        end
        function Exp.backward(ctx, grad_out)
            local result = ctx.saved_tensors[1]
            return result * grad_out
        end
        -- x = torch.tensor(1., requires_grad=True, dtype=torch.double).clone()
        x = tide.tensor(1., { requires_grad = true, dtype = tide.double }):clone()
        assert.is_true(gradcheck(Exp.apply, x))
        assert.is_true(gradgradcheck(Exp.apply, x))
    end)

    it("Sinh returns its intermediate results as outputs; SinhBad's grad_x has no graph", function()
        tide.manual_seed(6)
        -- class Sinh(torch.autograd.Function):
        local Sinh = tide.autograd.Function:extend("Sinh")
        function Sinh.forward(ctx, x)
            local expx = tide.exp(x)
            local expnegx = tide.exp(-x)
            ctx:save_for_backward(expx, expnegx)
            -- return (expx - expnegx) / 2, expx, expnegx
            return (expx - expnegx) / 2, expx, expnegx
        end
        function Sinh.backward(ctx, grad_out, _grad_out_exp, _grad_out_negexp)
            -- expx, expnegx = ctx.saved_tensors
            local expx, expnegx = ctx.saved_tensors[1], ctx.saved_tensors[2]
            local grad_input = grad_out * (expx + expnegx) / 2
            -- grad_input += _grad_out_exp * expx
            grad_input = grad_input + _grad_out_exp * expx
            -- grad_input -= _grad_out_negexp * expnegx
            grad_input = grad_input - _grad_out_negexp * expnegx
            return grad_input
        end
        -- def sinh(x): return Sinh.apply(x)[0]
        local function sinh(x)
            return (Sinh.apply(x))
        end
        local x = tide.rand(3, 3, { requires_grad = true, dtype = tide.double })
        assert.is_true(gradcheck(sinh, x))
        assert.is_true(gradgradcheck(sinh, x))
        -- the three outputs and their gradients
        local s, e, en = Sinh.apply(x)
        assert.is_true(tide.allclose(s, tide.sinh(x)))
        assert.is_true(tide.allclose(e, tide.exp(x)) and tide.allclose(en, tide.exp(-x)))
        assert.is_true(s.requires_grad and e.requires_grad and en.requires_grad)
        local gx = tide.autograd.grad((s + e + en):sum(), x)[1]
        assert.is_true(tide.allclose(gx, tide.cosh(x) + tide.exp(x) - tide.exp(-x)))
        -- out = sinh(x); grad_x, = torch.autograd.grad(out.sum(), x, create_graph=True)
        local out = sinh(x)
        local grad_x = tide.autograd.grad(out:sum(), x, { create_graph = true })[1]
        assert.is_true(tide.allclose(grad_x, tide.cosh(x)))
        assert.is_true(grad_x.requires_grad)
        -- d/dx sum(cosh(x)) = sinh(x)
        local gg = tide.autograd.grad(grad_x:sum(), x)[1]
        assert.is_true(tide.allclose(gg, tide.sinh(x)))

        -- class SinhBad(torch.autograd.Function):  # This is an example of what NOT to do!
        local SinhBad = tide.autograd.Function:extend("SinhBad")
        function SinhBad.forward(ctx, x_)
            local expx = tide.exp(x_)
            local expnegx = tide.exp(-x_)
            ctx.expx = expx
            ctx.expnegx = expnegx
            return (expx - expnegx) / 2
        end
        function SinhBad.backward(ctx, grad_out)
            local expx = ctx.expx
            local expnegx = ctx.expnegx
            local grad_input = grad_out * (expx + expnegx) / 2
            return grad_input
        end
        -- out = SinhBad.apply(x); grad_x, = torch.autograd.grad(out.sum(), x, create_graph=True)
        out = SinhBad.apply(x)
        grad_x = tide.autograd.grad(out:sum(), x, { create_graph = true })[1]
        -- grad_x is not part of the graph
        assert.is_false(grad_x.requires_grad)
    end)

    it("Cube's backward is CubeBackward, a Function with its own backward", function()
        local function cube_forward(x)
            return x ^ 3
        end
        local function cube_backward(grad_out, x)
            return grad_out * 3 * x ^ 2
        end
        local function cube_backward_backward(grad_out, sav_grad_out, x)
            return grad_out * sav_grad_out * 6 * x
        end
        local function cube_backward_backward_grad_out(grad_out, x)
            return grad_out * 3 * x ^ 2
        end
        local Cube = tide.autograd.Function:extend("Cube")
        local CubeBackward = tide.autograd.Function:extend("CubeBackward")
        function Cube.forward(ctx, x)
            ctx:save_for_backward(x)
            return cube_forward(x)
        end
        function Cube.backward(ctx, grad_out)
            local x = ctx.saved_tensors[1]
            return CubeBackward.apply(grad_out, x)
        end
        function CubeBackward.forward(ctx, grad_out, x)
            ctx:save_for_backward(x, grad_out)
            return cube_backward(grad_out, x)
        end
        function CubeBackward.backward(ctx, grad_out)
            -- x, sav_grad_out = ctx.saved_tensors
            local x, sav_grad_out = ctx.saved_tensors[1], ctx.saved_tensors[2]
            local dx = cube_backward_backward(grad_out, sav_grad_out, x)
            local dgrad_out = cube_backward_backward_grad_out(grad_out, x)
            return dgrad_out, dx
        end
        -- x = torch.tensor(2., requires_grad=True, dtype=torch.double)
        local x = tide.tensor(2., { requires_grad = true, dtype = tide.double })
        assert.is_true(gradcheck(Cube.apply, x))
        assert.is_true(gradgradcheck(Cube.apply, x))
        local out = Cube.apply(x)
        local grad_x = tide.autograd.grad(out, x, { create_graph = true })[1]
        assert.are.equal(12, grad_x:item())
        assert.are.equal("CubeBackwardBackward", tostring(grad_x.grad_fn))
        assert.are.equal(12, tide.autograd.grad(grad_x, x)[1]:item())
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. intermediate_source/custom_function_conv_bn_tutorial.py
---------------------------------------------------------------------------------------------
describe("custom_function_conv_bn_tutorial.py", function()
    -- from torch.autograd.function import once_differentiable
    local once_differentiable = tide.autograd.Function.once_differentiable
    local gradcheck = tide.autograd.gradcheck

    -- def convolution_backward(grad_out, X, weight):
    local function convolution_backward(grad_out, X, weight)
        -- grad_input = F.conv2d(X.transpose(0, 1), grad_out.transpose(0, 1)).transpose(0, 1)
        local grad_input = F.conv2d(X:transpose(1, 2), grad_out:transpose(1, 2)):transpose(1, 2)
        local grad_X = F.conv_transpose2d(grad_out, weight)
        return grad_X, grad_input
    end

    -- class Conv2D(torch.autograd.Function):
    local Conv2D = tide.autograd.Function:extend("Conv2D")
    function Conv2D.forward(ctx, X, weight)
        ctx:save_for_backward(X, weight)
        return F.conv2d(X, weight)
    end
    -- @staticmethod @once_differentiable def backward(ctx, grad_out):
    Conv2D.backward = once_differentiable(function(ctx, grad_out)
        local X, weight = ctx.saved_tensors[1], ctx.saved_tensors[2]
        return convolution_backward(grad_out, X, weight)
    end)

    -- def unsqueeze_all(t): return t[None, :, None, None]
    local function unsqueeze_all(t)
        return t[{ tide.newaxis, {}, tide.newaxis, tide.newaxis }]
    end

    -- def batch_norm_backward(grad_out, X, sum, sqrt_var, N, eps):
    local function batch_norm_backward(grad_out, X, sum, sqrt_var, N, eps)
        -- tmp = -((X - unsqueeze_all(sum) / N) * grad_out).sum(dim=(0, 2, 3))
        local tmp = -((X - unsqueeze_all(sum) / N) * grad_out):sum({ dim = { 1, 3, 4 } })
        local d_denom = tmp / (sqrt_var + eps) ^ 2
        local d_var = d_denom / (2 * sqrt_var)
        local d_mean_dx = grad_out / unsqueeze_all(sqrt_var + eps)
        -- d_mean_dx = unsqueeze_all(-d_mean_dx.sum(dim=(0, 2, 3)) / N)
        d_mean_dx = unsqueeze_all(-d_mean_dx:sum({ dim = { 1, 3, 4 } }) / N)
        local grad_input = X * unsqueeze_all(d_var * N)
        -- grad_input += unsqueeze_all(-d_var * sum)
        grad_input:add_(unsqueeze_all(-d_var * sum))
        -- grad_input *= 2 / ((N - 1) * N)
        grad_input:mul_(2 / ((N - 1) * N))
        grad_input:add_(d_mean_dx)
        grad_input:mul_(unsqueeze_all(sqrt_var + eps))
        grad_input:add_(grad_out)
        -- grad_input /= unsqueeze_all(sqrt_var + eps)  # sqrt_var + eps > 0!
        grad_input:div_(unsqueeze_all(sqrt_var + eps))
        return grad_input
    end

    -- class BatchNorm(torch.autograd.Function):
    local BatchNorm = tide.autograd.Function:extend("BatchNorm")
    -- def forward(ctx, X, eps=1e-3):
    function BatchNorm.forward(ctx, X, eps)
        eps = eps or 1e-3
        -- sum = X.sum(dim=(0, 2, 3))
        local sum = X:sum({ dim = { 1, 3, 4 } })
        -- var = X.var(unbiased=True, dim=(0, 2, 3))
        local var = X:var({ unbiased = true, dim = { 1, 3, 4 } })
        -- N = X.numel() / X.size(1)
        local N = X:numel() / X:size(2)
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
    BatchNorm.backward = once_differentiable(function(ctx, grad_out)
        local X = ctx.saved_tensors[1]
        return batch_norm_backward(grad_out, X, ctx.sum, ctx.sqrt_var, ctx.N, ctx.eps)
    end)

    -- class FusedConvBN2DFunction(torch.autograd.Function):
    local FusedConvBN2DFunction = tide.autograd.Function:extend("FusedConvBN2DFunction")
    function FusedConvBN2DFunction.forward(ctx, X, conv_weight, eps)
        eps = eps or 1e-3
        -- assert X.ndim == 4  # N, C, H, W
        assert(X.ndim == 4)
        ctx:save_for_backward(X, conv_weight)
        X = F.conv2d(X, conv_weight)
        local sum = X:sum({ dim = { 1, 3, 4 } })
        local var = X:var({ unbiased = true, dim = { 1, 3, 4 } })
        local N = X:numel() / X:size(2)
        local sqrt_var = tide.sqrt(var)
        ctx.eps = eps
        ctx.sum = sum
        ctx.N = N
        ctx.sqrt_var = sqrt_var
        local mean = sum / N
        local denom = sqrt_var + eps
        local out = X - unsqueeze_all(mean)
        -- out /= unsqueeze_all(denom)
        out:div_(unsqueeze_all(denom))
        return out
    end
    function FusedConvBN2DFunction.backward(ctx, grad_out)
        -- X, conv_weight, = ctx.saved_tensors
        local X, conv_weight = ctx.saved_tensors[1], ctx.saved_tensors[2]
        local X_conv_out = F.conv2d(X, conv_weight)
        grad_out = batch_norm_backward(grad_out, X_conv_out, ctx.sum, ctx.sqrt_var,
            ctx.N, ctx.eps)
        local grad_X, grad_input = convolution_backward(grad_out, X, conv_weight)
        -- return grad_X, grad_input, None, None, None, None, None
        return grad_X, grad_input, nil, nil, nil, nil, nil
    end

    -- class FusedConvBN(nn.Module):
    local FusedConvBN = nn.Module:extend("FusedConvBN")
    function FusedConvBN:init(in_channels, out_channels, kernel_size, exp_avg_factor, eps,
                              device, dtype)
        eps = eps or 1e-3
        -- factory_kwargs = {'device': device, 'dtype': dtype}
        local factory_kwargs = { device = device, dtype = dtype }
        -- weight_shape = (out_channels, in_channels, kernel_size, kernel_size)
        local weight_shape = { out_channels, in_channels, kernel_size, kernel_size }
        -- self.conv_weight = nn.Parameter(torch.empty(*weight_shape, **factory_kwargs))
        self.conv_weight = nn.Parameter(tide.empty(weight_shape, factory_kwargs))
        local num_features = out_channels
        self.num_features = num_features
        self.eps = eps
        self:reset_parameters()
    end
    function FusedConvBN:forward(X)
        return FusedConvBN2DFunction.apply(X, self.conv_weight, self.eps)
    end
    function FusedConvBN:reset_parameters()
        -- nn.init.kaiming_uniform_(self.conv_weight, a=math.sqrt(5))
        nn.init.kaiming_uniform_(self.conv_weight, { a = math.sqrt(5) })
    end

    it("gradcheck of Conv2D, BatchNorm and FusedConvBN2DFunction (float64)", function()
        tide.manual_seed(7)
        -- weight = torch.rand(5, 3, 3, 3, ...); X = torch.rand(10, 3, 7, 7, ...) (shrunk)
        local weight = tide.rand(2, 3, 3, 3, { requires_grad = true, dtype = tide.double })
        local X = tide.rand(2, 3, 4, 4, { requires_grad = true, dtype = tide.double })
        -- torch.autograd.gradcheck(Conv2D.apply, (X, weight))
        assert.is_true(gradcheck(Conv2D.apply, { X, weight }))
        -- a = torch.rand(1, 2, 3, 4, requires_grad=True, dtype=torch.double)
        local a = tide.rand(1, 2, 3, 4, { requires_grad = true, dtype = tide.double })
        -- torch.autograd.gradcheck(BatchNorm.apply, (a,), fast_mode=False)
        assert.is_true(gradcheck(BatchNorm.apply, { a }, { fast_mode = false }))
        -- torch.autograd.gradcheck(FusedConvBN2DFunction.apply, (X, weight))
        assert.is_true(gradcheck(FusedConvBN2DFunction.apply, { X, weight }))
        -- the fused op is conv2d then batch norm with eps outside the square root
        local y = FusedConvBN2DFunction.apply(X, weight)
        local c = F.conv2d(X, weight)
        local want = (c - c:mean({ dim = { 1, 3, 4 }, keepdim = true })) /
            (c:var({ dim = { 1, 3, 4 }, keepdim = true }):sqrt() + 1e-3)
        assert.is_true(tide.allclose(y, want))
        -- once_differentiable: its gradients raise when differentiated again
        -- (as PyTorch's, only when the incoming gradient requires grad)
        local out = Conv2D.apply(X, weight)
        local v = tide.ones_like(out):requires_grad_()
        local gX = tide.autograd.grad(out, X, v, { create_graph = true })[1]
        assert.matches("tide: Conv2D.backward: trying to differentiate twice a function " ..
            "that was marked with once_differentiable",
            catch(function() gX:sum():backward() end), 1, true)
    end)

    it("Net(fused=True) and Net(fused=False): Adadelta + StepLR, train and test", function()
        -- class Net(nn.Module): (28x28 MNIST shrunk to 10x10 images, 32/64 channels to 4/8)
        local Net = nn.Module:extend("Net")
        function Net:init(fused)
            if fused == nil then fused = true end
            self.fused = fused
            if fused then
                self.convbn1 = FusedConvBN(1, 4, 3)
                self.convbn2 = FusedConvBN(4, 8, 3)
            else
                -- self.conv1 = nn.Conv2d(1, 32, 3, 1, bias=False)
                self.conv1 = nn.Conv2d(1, 4, 3, 1, { bias = false })
                -- self.bn1 = nn.BatchNorm2d(32, affine=False, track_running_stats=False)
                self.bn1 = nn.BatchNorm2d(4, { affine = false, track_running_stats = false })
                self.conv2 = nn.Conv2d(4, 8, 3, 1, { bias = false })
                self.bn2 = nn.BatchNorm2d(8, { affine = false, track_running_stats = false })
            end
            -- self.fc1 = nn.Linear(9216, 128)
            self.fc1 = nn.Linear(72, 16)
            self.dropout = nn.Dropout(0.5)
            self.fc2 = nn.Linear(16, 10)
        end
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
            x = x:flatten(2)
            x = self.fc1(x)
            x = self.dropout(x)
            x = F.relu(x)
            x = self.fc2(x)
            -- output = F.log_softmax(x, dim=1)
            local output = F.log_softmax(x, { dim = 2 })
            return output
        end

        local function train(model, device, train_loader, optimizer, epoch)
            model:train()
            local losses = {}
            -- for batch_idx, (data, target) in enumerate(train_loader):
            -- (no enumerate over a DataLoader in Lua: a counter)
            local batch_idx = -1
            for data, target in train_loader:iter() do
                batch_idx = batch_idx + 1
                data, target = data:to(device), target:to(device)
                optimizer:zero_grad()
                local output = model(data)
                local loss = F.nll_loss(output, target)
                loss:backward()
                optimizer:step()
                losses[#losses + 1] = loss:item()
                assert(batch_idx >= 0 and epoch >= 0)
            end
            return losses
        end

        local function test(model, device, test_loader)
            model:eval()
            local test_loss = 0
            local correct = 0
            -- with torch.inference_mode():
            tide.inference_mode(function()
                for data, target in test_loader:iter() do
                    data, target = data:to(device), target:to(device)
                    local output = model(data)
                    -- test_loss += F.nll_loss(output, target, reduction='sum').item()
                    test_loss = test_loss + F.nll_loss(output, target, { reduction = "sum" }):item()
                    -- pred = output.argmax(dim=1, keepdim=True)
                    local pred = output:argmax({ dim = 2, keepdim = true })
                    -- correct += pred.eq(target.view_as(pred)).sum().item()
                    correct = correct + pred:eq(target:view_as(pred)):sum():item()
                end
            end)
            -- test_loss /= len(test_loader.dataset)
            -- (ds:len(): Lua 5.1 and LuaJIT ignore __len on tables)
            test_loss = test_loss / test_loader.dataset:len()
            return test_loss, correct
        end

        local device = tide.device("cpu")
        tide.manual_seed(8)
        local images = tide.randn(32, 1, 10, 10)
        local labels = tide.randint(1, 11, { 32 })
        local dataset1 = tide.data.TensorDataset(images, labels)
        -- train_kwargs = {'batch_size': 2048}
        local train_loader = tide.data.DataLoader(dataset1, { batch_size = 16 })
        local test_loader = tide.data.DataLoader(dataset1, { batch_size = 16 })

        local finals = {}
        -- for fused in (True, False):
        for _, fused in ipairs({ true, false }) do
            tide.manual_seed(123456)
            local model = Net(fused):to(device)
            -- optimizer = optim.Adadelta(model.parameters(), lr=1.0)
            local optimizer = optim.Adadelta(model:parameters(), { lr = 1.0 })
            -- scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
            local scheduler = optim.lr_scheduler.StepLR(optimizer, { step_size = 1, gamma = 0.7 })
            local first
            for epoch = 0, 3 do
                local losses = train(model, device, train_loader, optimizer, epoch)
                for _, l in ipairs(losses) do assert_finite(l, "train loss") end
                local test_loss, correct = test(model, device, test_loader)
                assert_finite(test_loss, "test loss")
                assert.is_true(correct >= 0 and correct <= 32)
                first = first or test_loss
                finals[fused] = test_loss
                scheduler:step()
            end
            assert.is_true(finals[fused] < first)
        end
    end)

    it("fused and unfused nets give the same outputs from the same weights", function()
        tide.manual_seed(9)
        local conv = nn.Conv2d(3, 4, 3, 1, { bias = false }):double()
        local fused = FusedConvBN(3, 4, 3, 0.1, 1e-3, nil, tide.double)
        tide.no_grad(function() fused.conv_weight:copy_(conv.weight) end)
        local x = tide.randn(4, 3, 6, 6, { dtype = tide.double })
        local c = conv(x)
        -- BatchNorm2d normalizes by sqrt(biased var + eps); the fused op by sqrt(unbiased var) + eps
        local N = c:numel() / c:size(2)
        local want = (c - c:mean({ dim = { 1, 3, 4 }, keepdim = true })) /
            (c:var({ dim = { 1, 3, 4 }, keepdim = true, unbiased = true }):sqrt() + 1e-3)
        assert.is_true(tide.allclose(fused(x), want))
        assert.are.equal(64, N)
    end)
end)

---------------------------------------------------------------------------------------------
-- the gaps these ports found, fixed in tide
---------------------------------------------------------------------------------------------
describe("gaps found porting these tutorials", function()
    it("autograd.Function with several differentiable outputs; extra nil gradients", function()
        local Two = tide.autograd.Function:extend("TwoOut")
        function Two.forward(ctx, x)
            return x * 2, x * 3
        end
        function Two.backward(ctx, g1, g2)
            -- an unused output's gradient is zeros (PyTorch's materialize_grads)
            return g1 * 2 + g2 * 3, nil, nil
        end
        local x = tide.tensor({ 1, 2 }, { requires_grad = true, dtype = tide.float32 })
        local a, b = Two.apply(x)
        assert.are.same({ 2, 4 }, a:tolist())
        assert.are.same({ 3, 6 }, b:tolist())
        a:sum():backward()
        assert.are.same({ 2, 2 }, x.grad:tolist())
        local Bad = tide.autograd.Function:extend("ExtraGrad")
        function Bad.forward(ctx, t) return t * 2 end
        function Bad.backward(ctx, g) return g * 2, g end
        assert.matches("tide: ExtraGrad.backward returned an incorrect number of gradients " ..
            "(expected 1, got 2); return one gradient (or nil) per forward argument (any " ..
            "beyond them must be nil)",
            catch(function() Bad.apply(x):sum():backward() end), 1, true)
    end)

    it("autograd.grad(outputs, inputs, grad_outputs, {create_graph = true})", function()
        local x = tide.tensor({ 1, 2 }, { requires_grad = true, dtype = tide.float32 })
        local y = x * x
        local v = tide.tensor({ 1, 10 }, { dtype = tide.float32 })
        assert.are.same({ 2, 40 }, tide.autograd.grad(y, x, v, { retain_graph = true })[1]:tolist())
        assert.are.same({ 2, 40 }, tide.autograd.grad({ y }, { x }, { v },
            { retain_graph = true })[1]:tolist())
        assert.are.same({ 2, 40 }, tide.autograd.grad(y, x, { grad_outputs = v })[1]:tolist())
        y = x * x
        assert.matches("tide: autograd.grad: grad_outputs given twice",
            catch(function() tide.autograd.grad(y, x, v, { grad_outputs = v }) end), 1, true)
        assert.is_nil(x.grad)
    end)
end)
