-- func_spec.lua — tide.func (PyTorch's torch.func) against PyTorch 1.13's values
-- (spec/fixtures/func_torch.lua, written by spec/fixtures/make_func.py on the same functions:
-- torch.autograd, torch.autograd.functional and 1.13's prototype vmap, as 1.13 ships no
-- functorch): grad and grad_and_value (argnums, has_aux, nesting, tables of tensors), vjp, jvp,
-- jacrev, jacfwd, hessian, vmap (in_dims, out_dims, nesting, randomness), functional_call and
-- stack_module_state (an ensemble), per-sample gradients; the argument checks' messages.
local tide = require("tide")
local D = require("spec.support.device")
local func = tide.func
local nn = tide.nn
local F = tide.nn.functional

local T = dofile("spec/fixtures/func_torch.lua")
local DEV = D.name

local function t64(v)
    return tide.tensor(v, { dtype = "float64", device = DEV })
end

local X = { 0.5, -1.2, 2.0 }
local Y = { { 1.5, 0.25 }, { -0.5, 2.0 } }
local V3 = { 1.0, -2.0, 0.5 }
local V2 = { 0.3, -0.7 }
local VY = { { 0.2, -0.1 }, { 0.4, 1.0 } }

-- the fixture's functions, written with tide's ops (1-based)
local function f(x)
    return tide.stack({ x[1] * x[2]:sin() + x[3]:pow(2), (x[1] * x[3]):exp() - x[2] })
end
local function g(x, y)
    return y:matmul(x:narrow(1, 1, 2)) * x[3] + y:sum(1):tanh()
end
local function two(x)
    return { x * x:sum(), x:pow(3):sum() }
end
local function s(x)
    return x[1]:pow(2) * x[2] + x[2]:sin() * x[3]:exp() + x[3]:pow(3)
end
local function s2(x, y)
    return y:matmul(x:narrow(1, 1, 2)):pow(2):sum() * x[3] + (y * y):sum():log()
end
local function h(x)
    return x:sin() * x:pow(3)
end

local function close(a, b, tol)
    return math.abs(a - b) <= (tol or 1e-12) * math.max(1, math.abs(b))
end

-- a tensor (or nested lists of them) against the fixture's {shape, values} (or lists)
local function same(want, got, what, tol)
    if want.shape == nil then
        assert.are.equal(#want, #got, what .. ": number of parts")
        for i = 1, #want do
            same(want[i], got[i], what .. "[" .. i .. "]", tol)
        end
        return
    end
    assert(tide.is_tensor(got), what .. ": expected a tensor, got " .. type(got))
    assert.are.same(want.shape, got.shape, what .. ": shape")
    local flat = got:to("cpu"):reshape(-1):totable()
    for k, w in ipairs(want.values) do
        assert(close(flat[k], w, tol),
            ("%s: element %d is %.17g, PyTorch's %.17g"):format(what, k, flat[k], w))
    end
end

-- two tensors of one shape with values within tol
local function near(a, b, what, tol)
    assert.are.same(b.shape, a.shape, what .. ": shape")
    local fa, fb = a:to("cpu"):reshape(-1):totable(), b:to("cpu"):reshape(-1):totable()
    for k = 1, #fb do
        assert(close(fa[k], fb[k], tol or 1e-10),
            ("%s: element %d is %.17g, expected %.17g"):format(what, k, fa[k], fb[k]))
    end
end

-- the message of the error fn(...) raises
local function msg(fn, ...)
    local ok, err = pcall(fn, ...)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

local function raises(text, fn, ...)
    assert.matches(text, msg(fn, ...), 1, true)
end

describe("tide.func (" .. DEV .. ")", function()
    describe("grad and grad_and_value", function()
        it("give the gradient of a scalar function, and its value", function()
            same(T.grad_s, func.grad(s)(t64(X)), "grad s")
            local gr, v = func.grad_and_value(s)(t64(X))
            same(T.grad_s, gr, "grad_and_value's gradient")
            assert(close(v:item(), T.value_s), "grad_and_value's value")
        end)

        it("take argnums, 1-based: one index, a list, a negative one", function()
            local both = func.grad(s2, { argnums = { 1, 2 } })(t64(X), t64(Y))
            same(T.grad_s2, both, "argnums {1, 2}")
            same(T.grad_s2[2], func.grad(s2, { argnums = 2 })(t64(X), t64(Y)), "argnums 2")
            same(T.grad_s2[2], func.grad(s2, { argnums = -1 })(t64(X), t64(Y)), "argnums -1")
            same(T.grad_s2[1], func.grad(s2)(t64(X), t64(Y)), "argnums 1 (the default)")
        end)

        it("with has_aux return the aux value (f returns output, aux)", function()
            local gr, aux = func.grad(function(x)
                local out = s(x)
                return out, { out = out, n = 3 }
            end, { has_aux = true })(t64(X))
            same(T.grad_s, gr, "grad")
            assert(close(aux.out:item(), T.value_s))
            assert.are.equal(3, aux.n)
            assert.is_false(aux.out.requires_grad) -- as PyTorch: no graph at the top level
            local gr2, v, aux2 = func.grad_and_value(function(x) return s(x), "note" end,
                { has_aux = true })(t64(X))
            same(T.grad_s, gr2, "grad_and_value grad")
            assert(close(v:item(), T.value_s))
            assert.are.equal("note", aux2)
        end)

        it("differentiate tables of tensors, keeping their structure", function()
            local params = { x = t64(X), more = { t64(Y) } }
            local gr = func.grad(function(p) return s2(p.x, p.more[1]) end)(params)
            same(T.grad_s2[1], gr.x, "grad.x")
            same(T.grad_s2[2], gr.more[1], "grad.more[1]")
        end)

        it("nest: grad(grad(h)) and grad(grad(grad(h)))", function()
            local x0 = t64(0.7)
            local d1 = func.grad(h)
            local d2 = func.grad(d1)
            local d3 = func.grad(d2)
            assert(close(d1(x0):item(), T.h_derivatives[1]), "h'")
            assert(close(d2(x0):item(), T.h_derivatives[2]), "h''")
            assert(close(d3(x0):item(), T.h_derivatives[3]), "h'''")
            assert.is_false(d2(x0).requires_grad)
        end)

        it("keep an inner transform's variable apart from an outer one's", function()
            -- d/dx [x * d/dy (x * y)] = d/dx x^2 = 2x: no perturbation confusion
            local gx = func.grad(function(x)
                return x * func.grad(function(y) return x * y end)(t64(1.0))
            end)(t64(3.0))
            assert(close(gx:item(), 6.0), "got " .. gx:item())
        end)

        it("are pure: no .grad changes, plain results; a caller's graph goes on", function()
            local w = t64({ 1.0, 2.0, 3.0 }):requires_grad_(true)
            local x = t64(X)
            local gr = func.grad(function(x_) return (x_ * w):sum() end)(x)
            assert.is_nil(w.grad)
            assert.is_nil(x.grad)
            near(gr, w:detach(), "d/dx sum(x * w)")
            -- the gradient depends on w, which requires grad: it stays differentiable, as
            -- functorch's does with torch.autograd
            assert.is_true(gr.requires_grad)
            gr:pow(2):sum():backward()
            near(w.grad, w:detach() * 2, "d/dw sum(w^2)")
            -- x requiring grad: the gradient penalty idiom
            local xr = t64(X):requires_grad_(true)
            func.grad(s)(xr):sum():backward()
            local H = tide.autograd.functional.hessian(s, t64(X))
            near(xr.grad, H:sum(1), "d/dx sum(grad s)")
            -- under no_grad they run all the same
            local ng
            tide.no_grad(function() ng = func.grad(s)(t64(X)) end)
            same(T.grad_s, ng, "under no_grad")
        end)

        it("give zeros for an argument f does not use", function()
            local gr = func.grad(function(x, _) return x:sum() end, { argnums = 2 })(t64(X),
                t64(Y))
            assert.are.same({ { 0, 0 }, { 0, 0 } }, gr:to("cpu"):totable())
        end)

        it("check their arguments", function()
            raises("tide: func.grad: f must return a scalar tensor (no dims), got one of shape " ..
                "{2}; reduce it (:sum(), :mean()), or use tide.func.vjp or tide.func.jacrev",
                func.grad(f), t64(X))
            raises("tide: func.grad: f must return a scalar tensor, got a table; to return " ..
                "more, return (output, aux) with {has_aux = true}",
                func.grad(function(x) return { x:sum() } end), t64(X))
            raises("tide: func.grad: f returned 2 values; return the output alone, or return " ..
                "(output, aux) with {has_aux = true}",
                func.grad(function(x) return x:sum(), x end), t64(X))
            raises("tide: func.grad: with has_aux = true f must return two values (output, " ..
                "aux), got 1", func.grad(s, { has_aux = true }), t64(X))
            raises("tide: func.grad: argnums = 3, but f was given 2 arguments",
                func.grad(s2, { argnums = 3 }), t64(X), t64(Y))
            raises("tide: func.grad: argnums = 0: argnums are 1-based in tide (1 is the first " ..
                "argument, PyTorch's 0; -1 the last)", func.grad, s, { argnums = 0 })
            raises("tide: func.grad: argnums names argument 2 twice; give each once",
                func.grad(s2, { argnums = { 2, -1 } }), t64(X), t64(Y))
            raises("tide: func.grad: argnums must be an integer or a list of integers such as " ..
                "{1, 2}, got a string", func.grad, s, { argnums = "x" })
            raises('tide: func.grad: unknown option "argnum"', func.grad, s, { argnum = 1 })
            raises("tide: func.grad: has_aux must be a boolean, got a number", func.grad, s,
                { has_aux = 1 })
            raises("tide: func.grad: expected a function (or a callable table such as a " ..
                "Module) as f, got a tensor", func.grad, t64(X))
            raises("tide: func.grad: argument 1 has dtype int64; gradients need " ..
                "floating-point tensors: convert it with :to(\"float32\")",
                func.grad(function(x) return x:sum() end), tide.tensor({ 1, 2 }))
            raises("tide: func.grad: argument 1.w is a number; a differentiated argument must " ..
                "be a tensor or a table of tensors",
                func.grad(function(p) return p.x:sum() end), { x = t64(X), w = 2 })
        end)
    end)

    describe("vjp and jvp", function()
        it("vjp gives the output and a function of the cotangent", function()
            local out, vjp_fn = func.vjp(f, t64(X))
            local gx = vjp_fn(t64(V2))
            same(T.vjp_f, { out, gx }, "vjp f")
            same(T.vjp_f[2], vjp_fn(t64(V2)), "vjp_fn called again")
            assert.is_false(out.requires_grad)
            local out2, vjp_g = func.vjp(g, t64(X), t64(Y))
            local gx2, gy2 = vjp_g(t64(V2))
            same(T.vjp_g, { out2, { gx2, gy2 } }, "vjp g: one result per primal")
        end)

        it("vjp takes has_aux, tables of tensors, and checks the cotangent", function()
            local out, vjp_fn, aux = func.vjp(function(p) return f(p.x), 7 end, { x = t64(X) },
                { has_aux = true })
            same(T.vjp_f[1], out, "output")
            assert.are.equal(7, aux)
            same(T.vjp_f[2], vjp_fn(t64(V2)).x, "vjp through a table")
            raises("tide: func.vjp: cotangent must have the shape {2} of f's output, got {3}",
                vjp_fn, t64(V3))
            raises("tide: func.vjp: cotangent must have the structure of f's output (one " ..
                "tensor), got a table of 2 tensors", vjp_fn, { t64(V2), t64(V2) })
            raises("tide: func.vjp: cotangent must be float64 as f's output, got float32",
                vjp_fn, tide.tensor(V2, { device = DEV }))
            raises("tide: func.vjp: cotangent must be on " .. D.other .. " as f's output, " ..
                "got " .. DEV, select(2, func.vjp(f, tide.tensor(X, { dtype = "float64",
                    device = D.other }))), t64(V2))
            raises('tide: func.vjp: unknown option "hasaux"', func.vjp, f, t64(X),
                { hasaux = true })
            raises("tide: func.vjp: give the primals after f", func.vjp, f)
            local _, vtwo = func.vjp(two, t64(X))
            local gt = vtwo({ t64(V3), t64(1.0) })
            local J = T.jacobian_two
            -- v^T J of both outputs: the sums of their rows
            local want = tide.tensor(V3, { dtype = "float64" }):matmul(tide.tensor(J[1].values,
                { dtype = "float64" }):reshape({ 3, 3 })) + tide.tensor(J[2].values,
                { dtype = "float64" })
            near(gt, want, "vjp of a list of outputs", 1e-12)
        end)

        it("jvp gives the output and J v", function()
            same(T.jvp_f, { func.jvp(f, { t64(X) }, { t64(V3) }) }, "jvp f")
            same(T.jvp_f, { func.jvp(f, t64(X), t64(V3)) }, "a tensor for one primal")
            same(T.jvp_g, { func.jvp(g, { t64(X), t64(Y) }, { t64(V3), t64(VY) }) }, "jvp g")
            local out, jv, aux = func.jvp(function(x) return two(x), "aux" end, { t64(X) },
                { t64(V3) }, { has_aux = true })
            assert.are.equal("aux", aux)
            assert.are.same({ 3 }, out[1].shape)
            local J = T.jacobian_two
            near(jv[1], tide.tensor(J[1].values, { dtype = "float64" }):reshape({ 3, 3 })
                :matmul(tide.tensor(V3, { dtype = "float64" })), "J v of output 1", 1e-12)
            assert.is_false(jv[1].requires_grad)
            local _, zero = func.jvp(function(_) return t64({ 1, 2 }) end, { t64(X) },
                { t64(V3) })
            assert.are.same({ 0, 0 }, zero:to("cpu"):totable())
        end)

        it("compose: H v as jvp(grad(f)), vjp(grad(f)) and grad(<grad f, v>)", function()
            local _, hv = func.jvp(func.grad(s), { t64(X) }, { t64(V3) })
            same(T.hvp_s, hv, "jvp of grad")
            local _, vjp_fn = func.vjp(func.grad(s), t64(X))
            same(T.hvp_s, vjp_fn(t64(V3)), "vjp of grad")
            same(T.hvp_s, func.grad(function(x)
                return (func.grad(s)(x) * t64(V3)):sum()
            end)(t64(X)), "grad of a product with grad")
            same(T.hvp_s, func.grad(function(x)
                local _, jv = func.jvp(s, { x }, { t64(V3) })
                return jv
            end)(t64(X)), "grad of jvp")
        end)

        it("jvp checks its arguments", function()
            raises("tide: func.jvp: tangents[1] must have the shape {3} of primals[1], got {2}",
                func.jvp, f, { t64(X) }, { t64(V2) })
            raises("tide: func.jvp: tangents must have one entry per primal: 2, got 1",
                func.jvp, g, { t64(X), t64(Y) }, { t64(V3) })
            raises("tide: func.jvp: primals must be a list of f's arguments ({x} for one), " ..
                "got a number", func.jvp, f, 3, { t64(V3) })
            raises("tide: func.jvp: strict must be a boolean", func.jvp, f, { t64(X) },
                { t64(V3) }, { strict = 1 })
        end)
    end)

    describe("jacrev, jacfwd and hessian", function()
        it("give PyTorch's Jacobians, by rows and by columns", function()
            for name, jac in pairs({ jacrev = func.jacrev, jacfwd = func.jacfwd }) do
                same(T.jacobian_f, jac(f)(t64(X)), name .. " f")
                same(T.jacobian_g, jac(g, { argnums = { 1, 2 } })(t64(X), t64(Y)), name .. " g")
                same(T.jacobian_g[2], jac(g, { argnums = 2 })(t64(X), t64(Y)), name .. " g, 2")
                same(T.jacobian_two, jac(two)(t64(X)), name .. " two (a list of outputs)")
                local J, aux = jac(function(x) return f(x), x:sum() end, { has_aux = true })(
                    t64(X))
                same(T.jacobian_f, J, name .. " with has_aux")
                assert(close(aux:item(), 1.3))
                local Jt = jac(function(p) return f(p.x) end)({ x = t64(X) })
                same(T.jacobian_f, Jt.x, name .. " of a table")
            end
            same(T.jacobian_f, func.jacrev(f, { chunk_size = 2 })(t64(X)), "chunk_size")
        end)

        it("hessian is jacfwd(jacrev(f)), also of non-scalar functions", function()
            same(T.hessian_s, func.hessian(s)(t64(X)), "hessian s")
            same(T.hessian_s2, func.hessian(s2, { argnums = { 1, 2 } })(t64(X), t64(Y)),
                "hessian s2 (blocks)")
            same(T.hessian_f, func.hessian(f)(t64(X)), "hessian f: {2, 3, 3}")
            same(T.hessian_s, func.jacrev(func.jacrev(s))(t64(X)), "jacrev(jacrev(s))")
        end)

        it("check their options", function()
            raises('tide: func.jacrev: unknown option "randomness"', func.jacrev, f,
                { randomness = "same" })
            raises('tide: func.jacfwd: unknown option "chunk_size"', func.jacfwd, f,
                { chunk_size = 1 })
            raises("tide: func.jacrev: chunk_size must be nil or an integer >= 1, got 0",
                func.jacrev, f, { chunk_size = 0 })
            raises('tide: func.hessian: unknown option "has_aux"', func.hessian, s,
                { has_aux = true })
            raises("tide: func.hessian: argnums = 2, but f was given 1 argument",
                func.hessian(s, { argnums = 2 }), t64(X))
            raises("tide: func.jacrev: f's output[2] is a string; f must return tensors or " ..
                "tables of tensors", func.jacrev(function(x) return { x, "no" } end), t64(X))
            raises("tide: func.jacfwd: f drew random numbers under randomness = \"error\"",
                func.jacfwd(function(x) return x * tide.rand({ 3 }, { device = DEV }) end),
                t64(X))
            local J = func.jacfwd(function(x) return x * tide.rand({ 3 }, { dtype = "float64",
                device = DEV }) end, { randomness = "same" })(t64(X))
            assert.are.same({ 3, 3 }, J.shape)
        end)
    end)

    describe("vmap", function()
        local A = T.vmap_in.A
        local B = T.vmap_in.B
        local M = T.vmap_in.M

        it("maps f over a dim of its arguments (PyTorch 1.13's prototype vmap values)",
            function()
                same(T.vmap_dot, func.vmap(tide.dot)(t64(A), t64(B)), "dot")
                same(T.vmap_mv, func.vmap(tide.mv, { in_dims = { nil, 1 } })(t64(M), t64(A)),
                    "mv with an unbatched matrix")
                same(T.vmap_mv, func.vmap(tide.mv, { in_dims = { false, 1 } })(t64(M), t64(A)),
                    "false for not batched")
                same(T.vmap_columns, func.vmap(function(c) return c * c:sum() end,
                    { in_dims = 2 })(t64(A)), "columns (in_dims = 2)")
                same(T.vmap_out_dims, func.vmap(function(a)
                    return tide.outer(a, a:narrow(1, 1, 2))
                end, { out_dims = 2 })(t64(A)), "out_dims = 2")
                same(T.vmap_vmap, func.vmap(func.vmap(function(a, b) return a * b + 1 end))(
                    t64(A), t64(B)), "vmap of vmap")
            end)

        it("takes tables of tensors, several results, out_dims per result", function()
            local r = func.vmap(function(p) return p.a + p.b end,
                { in_dims = { { a = 1, b = nil } } })({ a = t64(A), b = t64(B)[1] })
            near(r, t64(A) + t64(B)[1], "a table argument, one entry batched")
            local sum, prod = func.vmap(function(a, b) return a + b, { p = a * b } end,
                { out_dims = { 1, { p = 2 } } })(t64(A), t64(B))
            near(sum, t64(A) + t64(B), "first result")
            near(prod.p, (t64(A) * t64(B)):t(), "second result, stacked along dim 2")
            local v, k = func.vmap(function(a) return a:sum(), 42 end,
                { out_dims = { 1, nil } })(t64(A))
            assert.are.equal(42, k)
            near(v, t64(A):sum(2), "sums")
            local same_m = func.vmap(function(a) return a:sum(), t64(M) end,
                { out_dims = { 1, false } })(t64(A))
            assert.are.same({ 4 }, same_m.shape)
            local neg = func.vmap(function(a) return a * 2 end, { in_dims = -1,
                out_dims = -1 })(t64(A))
            near(neg, t64(A) * 2, "negative dims")
            local one = func.vmap(function(a) return a * 2 end, { out_dims = { 2 } })(t64(A))
            near(one, (t64(A) * 2):t(), "out_dims = {2} for one tensor, as PyTorch's (2,)")
        end)

        it("randomness: \"error\" raises, \"same\" repeats the draws, \"different\" not",
            function()
                local function noisy(x) return x + tide.rand({ 3 }, { dtype = "float64",
                    device = DEV }) end
                raises("tide: func.vmap: f drew random numbers under randomness = \"error\"; " ..
                    "pass {randomness = \"different\"} for each slice its own draws, or " ..
                    "\"same\" for the same draws in every slice", func.vmap(noisy), t64(A))
                local zeros = tide.zeros({ 4, 3 }, { dtype = "float64", device = DEV })
                local r = func.vmap(noisy, { randomness = "same" })(zeros)
                for b = 2, 4 do
                    assert.is_true(r[b]:equal(r[1]))
                end
                local d = func.vmap(noisy, { randomness = "different" })(zeros)
                assert.is_false(d[2]:equal(d[1]))
                -- "same" draws what one call draws, and leaves the generator there
                tide.manual_seed(5)
                local r5 = func.vmap(noisy, { randomness = "same" })(zeros)
                local after = tide.rand({ 1 }, { dtype = "float64" }):item()
                tide.manual_seed(5)
                local one = noisy(zeros[1])
                assert.is_true(r5[1]:equal(one))
                assert.are.equal(tide.rand({ 1 }, { dtype = "float64" }):item(), after)
            end)

        it("composes with grad: per-sample gradients against a loop", function()
            local P = T.per_sample
            local model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)):double()
            model:to(DEV)
            local names = { "1.weight", "1.bias", "3.weight", "3.bias" }
            local params = {}
            for i, name in ipairs(names) do
                params[name] = t64(P.params[i])
            end
            local x = t64(P.x)
            local y = tide.tensor(P.y, { device = DEV }) + 1 -- tide's classes are 1-based
            local function loss(p, xi, yi)
                local out = func.functional_call(model, p, { xi:unsqueeze(1) })
                return F.cross_entropy(out, yi:unsqueeze(1))
            end
            local per = func.vmap(func.grad(loss), { in_dims = { nil, 1, 1 } })(params, x, y)
            for i, name in ipairs(names) do
                same(P.grads[i], per[name], "per-sample " .. name, 1e-10)
            end
            -- the loop, in tide
            for n = 1, 5 do
                local gi = func.grad(loss)(params, x[n], y[n])
                for _, name in ipairs(names) do
                    near(per[name][n], gi[name], "sample " .. n .. " " .. name, 1e-12)
                end
            end
            for _, p in ipairs(model:parameters()) do
                assert.is_nil(p.grad) -- pure
            end
        end)

        it("runs an ensemble: stack_module_state + vmap + functional_call", function()
            local E = T.ensemble
            local models = {}
            for m = 1, 3 do
                local lin = nn.Linear(3, 2):double():to(DEV)
                tide.no_grad(function()
                    lin.weight:copy_(t64(E.weights[m]))
                    lin.bias:copy_(t64(E.biases[m]))
                end)
                models[m] = lin
            end
            local params, buffers = func.stack_module_state(models)
            assert.are.same({ 3, 2, 3 }, params.weight.shape)
            assert.is_true(params.weight.requires_grad)
            assert.is_nil(params.weight.grad_fn) -- new leaves
            assert.are.same({}, buffers)
            local x = t64(E.x)
            local function call(p, b, xi)
                return func.functional_call(models[1], { p, b }, xi)
            end
            local out = func.vmap(call, { in_dims = { 1, 1, nil } })(params, buffers, x)
            same(E.out, out, "ensemble outputs", 1e-12)
            for m = 1, 3 do
                near(out[m], models[m](x), "model " .. m, 1e-12)
            end
            -- one batch per model
            local xs = tide.stack({ x, x * 2, x - 1 })
            local each = func.vmap(call, { in_dims = { 1, 1, 1 } })(params, buffers, xs)
            for m = 1, 3 do
                near(each[m], models[m](xs[m]), "model " .. m .. " on its batch", 1e-12)
            end
            -- the stacked parameters take the ensemble's gradients
            out:sum():backward()
            near(params.bias.grad, tide.full({ 3, 2 }, 4, { dtype = "float64", device = DEV }),
                "d/d(bias)")
            assert.is_nil(models[1].bias.grad)
        end)

        it("checks its arguments", function()
            raises("tide: func.vmap: the batched arguments disagree on the batch size: " ..
                "argument 1 has 4 along dim 1, argument 2 has 2 along dim 1",
                func.vmap(tide.mv), t64(A), t64(M))
            raises("tide: func.vmap: in_dims = 0: dims are 1-based in tide (1 is the first " ..
                "dim, PyTorch's 0; -1 the last)", func.vmap, tide.mv, { in_dims = 0 })
            raises("tide: func.vmap: argument 2 is a number, but in_dims gives it dim 1; give " ..
                "nil for an argument that is not batched (only tensors can be)",
                func.vmap(function(a, k) return a * k end), t64(A), 2)
            raises("tide: func.vmap: in_dims gives argument 1 dim 3, out of range for a " ..
                "tensor of 2 dims; use 1..2 or -2..-1 (dims are 1-based)",
                func.vmap(tide.sum, { in_dims = 3 }), t64(A))
            raises("tide: func.vmap: no argument is batched: give at least one tensor " ..
                "argument a dim in in_dims", func.vmap(tide.sum, { in_dims = { nil } }), t64(A))
            raises("tide: func.vmap: in_dims has an entry for argument 2, but f was given 1 " ..
                "argument", func.vmap(tide.sum, { in_dims = { 1, 1 } }), t64(A))
            raises("tide: func.vmap: f's output 1 is a number; f must return tensors where " ..
                "out_dims gives a dim", func.vmap(function(_) return 1 end), t64(A))
            raises("tide: func.vmap: out_dims gives output 1 no dim, but f returned different " ..
                "values for it in slices 1 and 2", func.vmap(function(a) return a end,
                    { out_dims = false }), t64(A))
            raises('tide: func.vmap: unknown option "in_dim"', func.vmap, tide.sum,
                { in_dim = 1 })
            raises('tide: func.vmap: randomness must be "error", "different" or "same", got ' ..
                '"none"', func.vmap, tide.sum, { randomness = "none" })
            raises("tide: func.vmap: chunk_size must be nil or an integer >= 1, got 0",
                func.vmap, tide.sum, { chunk_size = 0 })
            raises("tide: func.vmap: in_dims[1] is a table, but argument 1 is a tensor; give " ..
                "it one dim, or nil", func.vmap(tide.sum, { in_dims = { { 1 } } }), t64(A))
            same(T.vmap_dot, func.vmap(tide.dot, { chunk_size = 2 })(t64(A), t64(B)),
                "chunk_size leaves the values alone")
        end)
    end)

    describe("functional_call and stack_module_state", function()
        it("functional_call takes a list of tables and kwargs (the module's options)",
            function()
                local Scale = nn.Module:extend("Scale")
                function Scale:init()
                    self.w = tide.ones({ 2 }, { requires_grad = true })
                    self:register_buffer("b", tide.zeros({ 2 }))
                end
                function Scale:forward(x, opts)
                    return (x * self.w + self.b) * ((opts or {}).by or 1)
                end
                local m = Scale()
                local x = tide.tensor({ 1.0, 2.0 })
                local w, b = tide.tensor({ 2.0, 3.0 }), tide.tensor({ 1.0, 1.0 })
                local out = func.functional_call(m, { { w = w }, { b = b } }, x, { by = 10 })
                assert.are.same({ 30, 70 }, out:totable())
                assert.are.same({ 3, 7 }, func.functional_call(m, { w = w, b = b }, { x })
                    :totable())
                assert.are.same({ 1, 1 }, m.w:detach():totable()) -- put back
                raises("tide: func.functional_call: 'w' is in params_and_buffers[1] and [2]; " ..
                    "give each name once", func.functional_call, m, { { w = w }, { w = w } }, x)
                raises("tide: func.functional_call: Scale has no parameter or buffer named 'v'",
                    func.functional_call, m, { v = w }, x)
                raises("tide: func.functional_call: expected a Module, got a number",
                    func.functional_call, 1, {}, x)
                raises("tide: func.functional_call: kwargs must be a table (the module's " ..
                    "options), got a number", func.functional_call, m, {}, x, 3)
            end)

        it("functional_call's tensors are the module's parameters while the call runs",
            function()
                -- a forward that lists its parameters (next(self.parameters()).device in
                -- PyTorch) sees the stand-ins, and the module's own after the call
                local Probe = nn.Module:extend("Probe")
                function Probe:init()
                    self.lin = nn.Linear(2, 2)
                end
                function Probe:forward(x)
                    self.seen = self:parameters()[1]
                    return self.lin(x)
                end
                local m = Probe()
                local w = tide.zeros(2, 2) -- a plain tensor, not a parameter
                func.functional_call(m, { ["lin.weight"] = w }, tide.ones(1, 2))
                assert.are.equal(w, m.seen)
                assert.are.equal(m.lin.weight, m:parameters()[1])
                -- nested calls with one tensor leave it a stand-in until the outer one ends
                function Probe:forward(x)
                    if x:numel() > 2 then
                        func.functional_call(self, { ["lin.weight"] = w }, x[1])
                    end
                    self.seen = self:parameters()[1]
                    return self.lin(x)
                end
                func.functional_call(m, { ["lin.weight"] = w }, tide.ones(2, 2))
                assert.are.equal(w, m.seen)
            end)

        it("stack_module_state checks the models", function()
            raises("tide: func.stack_module_state: expected at least one model, got an " ..
                "empty list", func.stack_module_state, {})
            raises("tide: func.stack_module_state: models[2] is a Tanh, models[1] a Linear; " ..
                "stack models of one class", func.stack_module_state,
                { nn.Linear(2, 2), nn.Tanh() })
            local a, b = nn.Linear(2, 2), nn.Linear(2, 2)
            b:eval()
            raises("tide: func.stack_module_state: models[2] is in eval mode, models[1] in " ..
                "train mode; put them all in one (m:train() or m:eval())",
                func.stack_module_state, { a, b })
            raises("tide: func.stack_module_state: expected a list of models, got a Module " ..
                "(put it in a list: {model})", func.stack_module_state, a)
            local bn = { nn.BatchNorm1d(3), nn.BatchNorm1d(3) }
            local p, bufs = func.stack_module_state(bn)
            assert.are.same({ 2, 3 }, p.weight.shape)
            assert.are.same({ 2, 3 }, bufs.running_mean.shape)
            assert.is_false(bufs.running_mean.requires_grad)
        end)
    end)
end)
