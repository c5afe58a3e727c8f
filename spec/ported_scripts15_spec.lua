-- ported_scripts15_spec.lua — PyTorch's torch.func tutorials ported line for line onto tide.func:
-- intermediate_source/jacobians_hessians.py (jacrev, vjp under vmap, jacfwd, hessian, argnums,
-- batch Jacobians and Hessians, hvp by jvp(grad) and by vjp(grad)), neural_tangent_kernels.py
-- (functional_call with a params dict, vmap(jacrev) over a batch, einsum over the Jacobians, the
-- NTK-vector-product method with vjp, jvp and nested vmap) and what tide.func.jvp covers of
-- forward_ad_usage.py. Sizes are shrunk and the data deterministic (sin of a range, the same in
-- the PyTorch 1.13 script that gave the reference numbers: functorch's transforms). The Python
-- line stands above each Lua line that differs from it; argnums and dims are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

-- the reference script's data: sin(arange(n) * k + s) in the given shape
local function det(shape, s, k)
    local n = 1
    for _, d in ipairs(shape) do
        n = n * d
    end
    return tide.sin(tide.arange(n, { dtype = tide.float32 }) * (k or 0.37) + s):view(shape)
end

local function list(t)
    return t:flatten():tolist()
end

-- Python's torch.allclose
local function allclose(a, b, atol)
    return tide.allclose(a, b, { atol = atol or 1e-6, rtol = 1e-5 })
end

---------------------------------------------------------------------------------------------
-- 1. intermediate_source/jacobians_hessians.py
---------------------------------------------------------------------------------------------
describe("jacobians_hessians.py", function()
    -- from torch.func import vmap, vjp, jacrev, jacfwd, hessian, jvp, grad
    local func = tide.func
    local vmap, vjp, jacrev, jacfwd, hessian, jvp, grad =
        func.vmap, func.vjp, func.jacrev, func.jacfwd, func.hessian, func.jvp, func.grad

    -- def predict(weight, bias, x):
    --     return F.linear(x, weight, bias).tanh()
    local function predict(weight, bias, x)
        return F.linear(x, weight, bias):tanh()
    end

    it("the Jacobian row by row, by vmap(vjp_fn) and by jacrev(predict, argnums=2)", function()
        -- _ = torch.manual_seed(0)
        tide.manual_seed(0)
        local D = 4
        -- weight = torch.randn(D, D); bias = torch.randn(D); x = torch.randn(D)
        local weight, bias, x = det({ D, D }, 0.5), det({ D }, 1.0), det({ D }, 2.0)

        local unit_vectors
        -- def compute_jac(xp):
        local function compute_jac(xp)
            -- jacobian_rows = [torch.autograd.grad(predict(weight, bias, xp), xp, vec)[0]
            --                  for vec in unit_vectors]
            local jacobian_rows = {}
            for _, vec in ipairs(unit_vectors:unbind()) do
                jacobian_rows[#jacobian_rows + 1] =
                    tide.autograd.grad(predict(weight, bias, xp), xp, vec)[1]
            end
            return tide.stack(jacobian_rows)
        end

        -- xp = x.clone().requires_grad_()
        local xp = x:clone():requires_grad_()
        unit_vectors = tide.eye(D)

        local jacobian = compute_jac(xp)

        -- print(jacobian.shape); print(jacobian[0])
        assert.are.same({ D, D }, jacobian.shape)
        assert_close_list({ 0.022462, 0.035809, 0.044311, 0.046815 }, jacobian[1]:tolist(), 1e-4,
            "jacobian[0]")

        -- _, vjp_fn = vjp(partial(predict, weight, bias), x)
        local _, vjp_fn = vjp(function(x_) return predict(weight, bias, x_) end, x)

        -- ft_jacobian, = vmap(vjp_fn)(unit_vectors)
        local ft_jacobian = vmap(vjp_fn)(unit_vectors)

        -- assert torch.allclose(ft_jacobian, jacobian)
        assert.is_true(allclose(ft_jacobian, jacobian))

        -- ft_jacobian = jacrev(predict, argnums=2)(weight, bias, x)
        ft_jacobian = jacrev(predict, { argnums = 3 })(weight, bias, x)
        assert.is_true(allclose(ft_jacobian, jacobian))
        assert_close_list({ 0.022462, 0.035809, 0.044311, 0.046815, 0.025792, 0.020001, 0.011504,
            0.00145, -0.309029, -0.62714, -0.86037, -0.977153, -0.520835, -0.441964, -0.303275,
            -0.123539 }, list(ft_jacobian), 1e-4, "jacrev")
        -- PyTorch's positional argnums: jacrev(predict, 2)
        assert.is_true(allclose(jacrev(predict, 3)(weight, bias, x), jacobian))

        -- ft_jac_weight, ft_jac_bias = jacrev(predict, argnums=(0, 1))(weight, bias, x)
        local ft_jac_weight, ft_jac_bias = unpack(jacrev(predict, { argnums = { 1, 2 } })(weight,
            bias, x))
        assert.are.same({ D, D, D }, ft_jac_weight.shape)
        assert.is_true(math.abs(ft_jac_weight:sum():item() - 3.2398398) < 1e-4)
        assert_close_list({ 0.046851, 0, 0, 0, 0, 0.028113, 0, 0, 0, 0, 0.987143, 0, 0, 0, 0,
            0.534623 }, list(ft_jac_bias), 1e-4, "ft_jac_bias")
        -- positionally: jacrev(predict, (0, 1))
        local w2, b2 = unpack(jacrev(predict, { 1, 2 })(weight, bias, x))
        assert.is_true(allclose(w2, ft_jac_weight) and allclose(b2, ft_jac_bias))

        -- jacfwd and jacrev give the same Jacobian (the tutorial times them)
        -- jacfwd(predict, argnums=2)(weight, bias, x)
        assert.is_true(allclose(jacfwd(predict, { argnums = 3 })(weight, bias, x), jacobian))
        assert.is_true(allclose(jacfwd(predict, 3)(weight, bias, x), jacobian))
    end)

    it("hessian, jacfwd(jacfwd), jacrev(jacrev), batch Jacobians and Hessians", function()
        local Din, Dout = 3, 2
        local weight, bias, x = det({ Dout, Din }, 0.3), det({ Dout }, 0.7), det({ Din }, 1.1)

        -- hess_api = hessian(predict, argnums=2)(weight, bias, x)
        local hess_api = hessian(predict, { argnums = 3 })(weight, bias, x)
        -- hess_fwdfwd = jacfwd(jacfwd(predict, argnums=2), argnums=2)(weight, bias, x)
        local hess_fwdfwd = jacfwd(jacfwd(predict, { argnums = 3 }), { argnums = 3 })(weight, bias, x)
        -- hess_revrev = jacrev(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)
        local hess_revrev = jacrev(jacrev(predict, { argnums = 3 }), { argnums = 3 })(weight, bias, x)

        -- torch.allclose(hess_api, hess_fwdfwd)
        assert.is_true(allclose(hess_api, hess_fwdfwd))
        assert.is_true(allclose(hess_api, hess_revrev))
        assert.are.same({ 2, 3, 3 }, hess_api.shape)
        assert_close_list({ -0.006049, -0.01271, -0.017651, -0.01271, -0.026708, -0.037091,
            -0.017651, -0.037091, -0.051511, -0.00658, -0.006521, -0.005579, -0.006521, -0.006462,
            -0.005529, -0.005579, -0.005529, -0.00473 }, list(hess_api), 1e-3, "hess_api")
        -- hessian(predict, 2): argnums by position
        assert.is_true(allclose(hessian(predict, 3)(weight, bias, x), hess_api))

        local batch_size = 3
        -- x = torch.randn(batch_size, Din)
        x = det({ batch_size, Din }, 1.3)

        -- compute_batch_jacobian = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))
        local compute_batch_jacobian = vmap(jacrev(predict, { argnums = 3 }),
            { in_dims = { nil, nil, 1 } })
        local batch_jacobian0 = compute_batch_jacobian(weight, bias, x)
        assert_close_list({ 0.011285, 0.023713, 0.032932, 0.003264, 0.003235, 0.002768, 0.114162,
            0.239892, 0.333153, 0.088529, 0.08773, 0.075058, 0.195945, 0.411746, 0.571819,
            0.476636, 0.472337, 0.404109 }, list(batch_jacobian0), 1e-4, "batch_jacobian0")
        -- vmap(jacrev(predict, 2), (None, None, 0)): in_dims by position
        assert.is_true(allclose(vmap(jacrev(predict, 3), { nil, nil, 1 })(weight, bias, x),
            batch_jacobian0))

        -- def predict_with_output_summed(weight, bias, x):
        --     return predict(weight, bias, x).sum(0)
        local function predict_with_output_summed(weight_, bias_, x_)
            return predict(weight_, bias_, x_):sum(1)
        end

        -- batch_jacobian1 = jacrev(predict_with_output_summed, argnums=2)(weight, bias, x).movedim(1, 0)
        local batch_jacobian1 = jacrev(predict_with_output_summed, { argnums = 3 })(weight, bias, x)
            :movedim(2, 1)
        -- assert torch.allclose(batch_jacobian0, batch_jacobian1)
        assert.is_true(allclose(batch_jacobian0, batch_jacobian1))

        -- compute_batch_hessian = vmap(hessian(predict, argnums=2), in_dims=(None, None, 0))
        local compute_batch_hessian = vmap(hessian(predict, { argnums = 3 }),
            { in_dims = { nil, nil, 1 } })
        local batch_hess = compute_batch_hessian(weight, bias, x)
        -- batch_hess.shape
        assert.are.same({ 3, 2, 3, 3 }, batch_hess.shape)
        assert.is_true(math.abs(batch_hess:sum():item() - 4.3411322) < 1e-3)
    end)

    it("Hessian-vector products: jvp(grad(f)) and vjp(grad(f))", function()
        -- def hvp(f, primals, tangents):
        --   return jvp(grad(f), primals, tangents)[1]
        local function hvp(f, primals, tangents)
            return select(2, jvp(grad(f), primals, tangents))
        end

        -- def f(x):
        --   return x.sin().sum()
        local function f(x)
            return x:sin():sum()
        end

        -- x = torch.randn(2048); tangent = torch.randn(2048)
        local x, tangent = det({ 5 }, 0.2), det({ 5 }, 0.9)

        -- result = hvp(f, (x,), (tangent,))
        local result = hvp(f, { x }, { tangent })
        assert_close_list({ -0.154601, -0.49075, -0.720872, -0.744639, -0.578447 }, result:tolist(),
            1e-4, "hvp")

        -- def hvp_revrev(f, primals, tangents):
        --   _, vjp_fn = vjp(grad(f), *primals)
        --   return vjp_fn(*tangents)
        local function hvp_revrev(f_, primals, tangents)
            local _, vjp_fn = vjp(grad(f_), unpack(primals))
            return vjp_fn(unpack(tangents))
        end

        -- result_hvp_revrev = hvp_revrev(f, (x,), (tangent,))
        local result_hvp_revrev = { hvp_revrev(f, { x }, { tangent }) }
        -- assert torch.allclose(result, result_hvp_revrev[0])
        assert.is_true(allclose(result, result_hvp_revrev[1]))
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. intermediate_source/neural_tangent_kernels.py
---------------------------------------------------------------------------------------------
describe("neural_tangent_kernels.py", function()
    -- from torch.func import functional_call, vmap, vjp, jvp, jacrev
    local func = tide.func
    local functional_call, vmap, vjp, jvp, jacrev =
        func.functional_call, func.vmap, func.vjp, func.jvp, func.jacrev
    -- device = 'cuda'
    local device = "cpu"

    -- class CNN(nn.Module): (32 channels and a 32x32 image shrunk to 4 and 8x8)
    local CNN = nn.Module:extend("CNN")
    function CNN:init()
        self.conv1 = nn.Conv2d(3, 4, { 3, 3 })
        self.conv2 = nn.Conv2d(4, 4, { 3, 3 })
        self.conv3 = nn.Conv2d(4, 4, { 3, 3 })
        self.fc = nn.Linear(16, 3)
    end

    function CNN:forward(x)
        x = self.conv1(x)
        x = x:relu()
        x = self.conv2(x)
        x = x:relu()
        x = self.conv3(x)
        x = x:flatten(2)
        x = self.fc(x)
        return x
    end

    local function setup()
        -- x_train = torch.randn(20, 3, 32, 32, device=device)
        local x_train = det({ 4, 3, 8, 8 }, 0.1, 0.11):to(device)
        -- x_test = torch.randn(5, 3, 32, 32, device=device)
        local x_test = det({ 2, 3, 8, 8 }, 0.4, 0.13):to(device)

        -- net = CNN().to(device)
        local net = CNN():to(device)
        -- (the reference script's weights)
        tide.no_grad(function()
            local i = 0
            for _, p in net:named_parameters() do
                i = i + 1
                p:copy_(det(p.shape, i) * 0.3)
            end
        end)

        -- params = {k: v.detach() for k, v in net.named_parameters()}
        local params = {}
        for k, v in net:named_parameters() do
            params[k] = v:detach()
        end

        -- def fnet_single(params, x):
        --     return functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)
        local function fnet_single(params_, x)
            return functional_call(net, params_, { x:unsqueeze(1) }):squeeze(1)
        end
        return x_train, x_test, params, fnet_single
    end

    -- Python's dict.values() and zip(jac1, jac2) over two dicts with the same keys
    local function values(d)
        local keys, out = {}, {}
        for k in pairs(d) do
            keys[#keys + 1] = k
        end
        table.sort(keys)
        for i, k in ipairs(keys) do
            out[i] = d[k]
        end
        return out
    end

    -- def empirical_ntk_jacobian_contraction(fnet_single, params, x1, x2, compute='full'):
    local function empirical_ntk_jacobian_contraction(fnet_single, params, x1, x2, compute)
        compute = compute or "full"
        -- jac1 = vmap(jacrev(fnet_single), (None, 0))(params, x1)
        local jac1 = vmap(jacrev(fnet_single), { nil, 1 })(params, x1)
        -- jac1 = jac1.values()
        jac1 = values(jac1)
        -- jac1 = [j.flatten(2) for j in jac1]
        for i, j in ipairs(jac1) do
            jac1[i] = j:flatten(3)
        end

        -- jac2 = vmap(jacrev(fnet_single), (None, 0))(params, x2)
        local jac2 = vmap(jacrev(fnet_single), { nil, 1 })(params, x2)
        jac2 = values(jac2)
        for i, j in ipairs(jac2) do
            jac2[i] = j:flatten(3)
        end

        local einsum_expr = nil
        if compute == "full" then
            einsum_expr = "Naf,Mbf->NMab"
        elseif compute == "trace" then
            einsum_expr = "Naf,Maf->NM"
        elseif compute == "diagonal" then
            einsum_expr = "Naf,Maf->NMa"
        else
            assert(false)
        end

        -- result = torch.stack([torch.einsum(einsum_expr, j1, j2) for j1, j2 in zip(jac1, jac2)])
        local terms = {}
        for i = 1, #jac1 do
            terms[i] = tide.einsum(einsum_expr, jac1[i], jac2[i])
        end
        local result = tide.stack(terms)
        -- result = result.sum(0)
        result = result:sum(1)
        return result
    end

    it("method 1: Jacobian contraction (full and trace) against PyTorch's NTK", function()
        local x_train, x_test, params, fnet_single = setup()
        -- result = empirical_ntk_jacobian_contraction(fnet_single, params, x_train, x_test)
        local result = empirical_ntk_jacobian_contraction(fnet_single, params, x_train, x_test)
        -- print(result.shape)
        assert.are.same({ 4, 2, 3, 3 }, result.shape)
        assert_close_list({ 40.93687, 29.68332, 18.48887, 25.67921, 26.96544, 17.38366, 11.00298,
            13.37951, 17.94212 }, list(result[{ 1, 2 }]), 1e-4, "result[0, 1]")
        assert.is_true(ported.close(result:sum():item(), 2320.3044, 1e-4))

        -- result = empirical_ntk_jacobian_contraction(fnet_single, params, x_train, x_test, 'trace')
        result = empirical_ntk_jacobian_contraction(fnet_single, params, x_train, x_test, "trace")
        assert.are.same({ 4, 2 }, result.shape)
        assert_close_list({ 151.86525, 85.84444, -229.40866, -202.33316, 442.34546, 586.71771,
            42.24915, 2.67219 }, list(result), 1e-4, "trace")
    end)

    it("method 2: NTK-vector products (vjp, jvp, nested vmap) equal method 1", function()
        local x_train, x_test, params, fnet_single = setup()

        -- def empirical_ntk_ntk_vps(func, params, x1, x2, compute='full'):
        local function empirical_ntk_ntk_vps(func_, params_, x1_, x2_, compute)
            compute = compute or "full"
            local function get_ntk(x1, x2)
                local function func_x1(p)
                    return func_(p, x1)
                end

                local function func_x2(p)
                    return func_(p, x2)
                end

                local output, vjp_fn = vjp(func_x1, params_)

                local function get_ntk_slice(vec)
                    -- vjps = vjp_fn(vec)
                    local vjps = { vjp_fn(vec) }
                    -- _, jvps = jvp(func_x2, (params,), vjps)
                    local _, jvps = jvp(func_x2, { params_ }, vjps)
                    return jvps
                end

                -- basis = torch.eye(output.numel(), dtype=output.dtype, device=output.device).view(output.numel(), -1)
                local basis = tide.eye(output:numel(), { dtype = output.dtype, device = output.device })
                    :view(output:numel(), -1)
                return vmap(get_ntk_slice)(basis)
            end

            -- result = vmap(vmap(get_ntk, (None, 0)), (0, None))(x1, x2)
            local result = vmap(vmap(get_ntk, { nil, 1 }), { 1, nil })(x1_, x2_)

            if compute == "full" then
                return result
            end
            if compute == "trace" then
                return tide.einsum("NMKK->NM", result)
            end
            if compute == "diagonal" then
                return tide.einsum("NMKK->NMK", result)
            end
        end

        -- result_from_jacobian_contraction = empirical_ntk_jacobian_contraction(fnet_single, params, x_test, x_train)
        local result_from_jacobian_contraction = empirical_ntk_jacobian_contraction(fnet_single,
            params, x_test, x_train)
        -- result_from_ntk_vps = empirical_ntk_ntk_vps(fnet_single, params, x_test, x_train)
        local result_from_ntk_vps = empirical_ntk_ntk_vps(fnet_single, params, x_test, x_train)
        -- assert torch.allclose(result_from_jacobian_contraction, result_from_ntk_vps, atol=1e-5)
        assert.is_true(tide.allclose(result_from_jacobian_contraction, result_from_ntk_vps,
            { atol = 1e-5, rtol = 1e-4 }))
        assert.is_true(allclose(empirical_ntk_ntk_vps(fnet_single, params, x_test, x_train, "trace"),
            empirical_ntk_jacobian_contraction(fnet_single, params, x_test, x_train, "trace"), 1e-3))
    end)
end)

---------------------------------------------------------------------------------------------
-- Gaps the ports met, fixed: PyTorch's positional parameters of the transforms, and conv2d's
-- gradient differentiable again (the NTK-vector products' jvp through a CNN)
---------------------------------------------------------------------------------------------
describe("tide.func and conv2d: the gaps the torch.func tutorials met", function()
    local func = tide.func

    it("conv2d and F.unfold differentiate twice (a gradient penalty) as PyTorch's", function()
        local function det64(shape, s, k)
            local n = 1
            for _, d in ipairs(shape) do
                n = n * d
            end
            return tide.sin(tide.arange(n, { dtype = tide.float64 }) * (k or 0.37) + s):view(shape)
        end
        local x = det64({ 2, 4, 6, 6 }, 0.1, 0.21):requires_grad_()
        local w1 = (det64({ 4, 2, 3, 3 }, 0.5) * 0.4):requires_grad_()
        local b1 = det64({ 4 }, 0.2):requires_grad_()
        local w2 = (det64({ 3, 4, 2, 2 }, 0.9) * 0.4):requires_grad_()
        local b2 = det64({ 3 }, 0.3):requires_grad_()
        -- h = F.conv2d(x, w1, b1, stride=2, padding=1, groups=2).tanh()
        local h = F.conv2d(x, w1, b1, { stride = 2, padding = 1, groups = 2 }):tanh()
        -- y = F.conv2d(h, w2, b2, dilation=2)
        local y = F.conv2d(h, w2, b2, { dilation = 2 })
        -- gx, gw1 = torch.autograd.grad(y.pow(2).sum(), (x, w1), create_graph=True)
        local gx, gw1 = unpack(tide.autograd.grad(y:pow(2):sum(), { x, w1 }, { create_graph = true }))
        -- (gx.pow(2).sum() + gw1.pow(2).sum()).backward()
        local penalty = gx:pow(2):sum() + gw1:pow(2):sum()
        penalty:backward()
        local want = { { 48.76884699, 4595.4098042 }, { 211.19337195, 8712.04541889 },
            { -188.96948901, 1471.32646352 }, { 682.3939323, 5016.19932511 },
            { 537.51561514, 537.51561514 } }
        for i, t in ipairs({ x, w1, b1, w2, b2 }) do
            assert_close_list(want[i], { t.grad:sum():item(), t.grad:abs():sum():item() }, 1e-8,
                "grad " .. i)
        end
        -- F.unfold's gradient is differentiable again too
        local xu = det({ 1, 2, 4, 4 }, 0.3):requires_grad_()
        local g = tide.autograd.grad(F.unfold(xu, { 2, 2 }):pow(2):sum(), xu, nil,
            { create_graph = true })[1]
        assert.are.equal(144, tide.autograd.grad(g:sum(), xu)[1]:sum():item())
    end)

    it("vmap, jacrev, jacfwd, hessian, grad take PyTorch's positional parameters", function()
        local function f(a, b)
            return (a * b):sum()
        end
        local a, b = det({ 3 }, 0.1), det({ 3 }, 0.2)
        -- grad(f, 1)(a, b): argnums by position; grad(f, (0, 1))
        assert.is_true(allclose(func.grad(f, 2)(a, b), a))
        local ga, gb = unpack(func.grad(f, { 1, 2 })(a, b))
        assert.is_true(allclose(ga, b) and allclose(gb, a))
        -- grad(f, 0, True): has_aux by position
        local g, aux = func.grad(function(p) return p:sum(), "aux" end, 1, true)(a)
        assert.is_true(allclose(g, tide.ones(3)))
        assert.are.equal("aux", aux)
        -- vmap(f, 0, 0, "different"), then an options table for the rest
        local r = func.vmap(function(v) return v * 2 end, 1, 1, "different", { chunk_size = 2 })(
            det({ 2, 3 }, 0.5))
        assert.is_true(allclose(r, det({ 2, 3 }, 0.5) * 2))
        -- out_dims by position: vmap(f, 0, 1)
        assert.are.same({ 3, 2 }, func.vmap(function(v) return v end, 1, 2)(det({ 2, 3 }, 0.5)).shape)
        -- jacfwd(f, 0, True): has_aux by position
        local j, aux2 = func.jacfwd(function(v) return v * 3, v end, 1, true)(a)
        assert.is_true(allclose(j, tide.eye(3) * 3) and allclose(aux2, a))
    end)

    it("a parameter given by position and by name, or an options table not last, raises", function()
        local function f(v)
            return v
        end
        assert.has_error(function()
            func.vmap(f, { nil, 1 }, { in_dims = 1 })
        end, "tide: func.vmap: in_dims given twice, as argument #2 and by name; pass it once")
        assert.has_error(function()
            func.jacrev(f, 1, { argnums = 1 })
        end, "tide: func.jacrev: argnums given twice, as argument #2 and by name; pass it once")
        assert.has_error(function()
            func.vmap(f, { in_dims = 1 }, 2)
        end, "tide: func.vmap: the options table must come last; got it in the place of in_dims")
        assert.has_error(function()
            func.hessian(f, 1, 2)
        end, "tide: func.hessian: got 2 positional arguments; it takes at most 1 (argnums), " ..
            "then an options table")
        assert.has_error(function()
            func.grad(f, 0)
        end)
    end)
end)
