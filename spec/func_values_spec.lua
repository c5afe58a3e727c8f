-- func_values_spec.lua: tide.func's values and structures against PyTorch 1.13's functorch
-- (vmap, grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian;
-- torch.nn.utils.stateless.functional_call; functorch.combine_state_for_ensemble for
-- stack_module_state), float64, to 1e-10. R below is PyTorch's output, pasted; the functions
-- are the same as PyTorch's with 1-based dims and argnums.
local tide = require("tide")
local func = tide.func
local nn = tide.nn

local R = {
    v_sum = {shape = {2, 3}, values = {0.62325320018546393, -1.2116508117573943,
        1.1820866548733862, 1.0972444852644601, 0.32507222732747354, -0.70863945596146016}},
    v_in1 = {shape = {3, 2}, values = {1, 3, 1.0799999999999998, -0.26999999999999996,
        2.6000000000000001, -0.90999999999999992}},
    v_none = {shape = {2, 2}, values = {-1.5700000000000003, -0.28999999999999981,
        0.91999999999999993, -0.82000000000000006}},
    v_dict = {shape = {2, 3}, values = {1, -2.3999999999999999, 4, 3, 0.59999999999999998,
        -1.3999999999999999}},
    v_out1 = {shape = {3, 2}, values = {1, 3, -2.3999999999999999, 0.59999999999999998, 4,
        -1.3999999999999999}},
    v_nested = {shape = {2, 3}, values = {0.5, 1, -0.5, -1.5, -3, 1.5}},
    v_tuple = {{shape = {2}, values = {1.3, 1.1000000000000001}}, {shape = {3, 2}, values = {0.25,
        2.25, 1.4399999999999999, 0.089999999999999997, 4, 0.48999999999999994}}},
    v_dictout = {p = {shape = {2, 3}, values = {0.25, 1.4399999999999999, 4, 2.25,
        0.089999999999999997, 0.48999999999999994}}, s = {shape = {2}, values = {1.3,
        1.1000000000000001}}},
    v_index = {shape = {2}, values = {0.80000000000000004, -0.39999999999999997}},
    v_matmul = {shape = {2, 2, 2}, values = {-1.5700000000000003, -0.28999999999999981,
        0.92000000000000004, -0.82000000000000006, 0.51000000000000001, -0.37000000000000011,
        -3.9500000000000002, -3.3499999999999996}},
    v_sumdim = {shape = {2, 2}, values = {1.3, 1.1000000000000001, -0.099999999999999978, -0.5}},
    v_sumkeep = {shape = {3, 1, 2}, values = {0.69999999999999996, 2.5, -1.0999999999999999, -1.7,
        1.6000000000000001, -0.19999999999999996}},
    v_slice = {shape = {2, 2}, values = {-1.2, 2, 0.29999999999999999, -0.69999999999999996}},
    v_same_equal = true,
    v_diff_equal = false,
    g_arg1 = {shape = {2, 3}, values = {0.5, -1.2, 2, 1.5, 0.29999999999999999,
        -0.69999999999999996}},
    g_args = {{shape = {2, 3}, values = {1.2, -2.2999999999999998, 3.6000000000000001, 4,
        -1.3999999999999999, -0.89999999999999991}}, {shape = {2, 3}, values = {0.5, -1.2, 2, 1.5,
        0.29999999999999999, -0.69999999999999996}}},
    g_aux = {{shape = {2, 3}, values = {0.75, 4.3200000000000003, 12, 6.75, 0.27000000000000002,
        1.4699999999999998}}, {shape = {2}, values = {1.3, 1.1000000000000001}}},
    gv = {{shape = {2, 3}, values = {0.87758256189037276, 0.36235775447667362,
        -0.41614683654714241, 0.070737201667702906, 0.95533648912560598, 0.7648421872844885}},
        {shape = {}, values = {1.1054813854903616}}},
    gv_aux = {{shape = {2, 3}, values = {0.5, -1.2, 2, 1.5, 0.29999999999999999,
        -0.69999999999999996}}, {{shape = {}, values = {-0.27000000000000002}}, {m = {shape = {2,
        3}, values = {0.10000000000000001, -0.12, -0.80000000000000004, 1.5, -0.59999999999999998,
        -0.34999999999999998}}}}},
    vjp_out = {{shape = {2, 3}, values = {0.10000000000000001, -0.12, -0.80000000000000004, 1.5,
        -0.59999999999999998, -0.34999999999999998}}, {shape = {2, 3},
        values = {0.69866933079506122, -1.1001665833531717, 1.6105816576913494,
        2.3414709848078967, -0.60929742682568167, -0.22057446139579695}}},
    vjp_g = {{shape = {2, 3}, values = {0.69999999999999996, -1.0999999999999999,
        1.6000000000000001, 2.5, -1.7, -0.19999999999999996}}, {shape = {2, 3},
        values = {0.99003328892062081, -2.3940049983336307, 3.8421219880057702,
        2.3104534588022094, 0.17515594903585727, -1.3143077933232608}}},
    vjp_aux = {{shape = {3}, values = {2.7182818284590451, 14.778112197861301,
        -0.36787944117144233}}, {{shape = {3}, values = {5.4365636569180902, 44.334336593583899,
        0}}}, {shape = {}, values = {2}}},
    jvp1 = {{shape = {2, 3}, values = {0.2397127693021015, 1.1184469031606714, 1.8185948536513634,
        1.4962424799060816, 0.088656061998401856, 0.45095238106638369}}, {shape = {2, 3},
        values = {0.1836433639098779, -0.13668683913392346, -0.03080150149255878,
        1.1036007891056088, -1.1642423067980427, -0.58980360916841645}}},
    jvp_aux = {{shape = {2, 2}, values = {-1.5700000000000003, -0.28999999999999981,
        0.91999999999999993, -0.82000000000000006}}, {shape = {2, 2},
        values = {-0.53500000000000014, -0.33499999999999996, -1.54, -2.1099999999999999}},
        {n = {shape = {}, values = {2.4000000000000004}}}},
    jvp_strict = {{shape = {3}, values = {3, 6, -3}}, {shape = {3}, values = {3, 6, -3}}},
    jr = {shape = {3, 3}, values = {1.922075596544176, 0.8414709848078965, 0.8414709848078965,
        0.90929742682568171, 0.077003753731396896, 0.90929742682568171, -0.8414709848078965,
        -0.8414709848078965, 0.23913362692838303}},
    jf = {shape = {3, 3}, values = {1.922075596544176, 0.8414709848078965, 0.8414709848078965,
        0.90929742682568171, 0.077003753731396896, 0.90929742682568171, -0.8414709848078965,
        -0.8414709848078965, 0.23913362692838303}},
    jr_arg1 = {shape = {3, 4}, values = {1.8414709848078965, 1, 1, 1, 2, 2.9092974268256819, 2, 2,
        -1, -1, -1.8414709848078965, -1}},
    jf_arg1 = {shape = {3, 4}, values = {1.8414709848078965, 1, 1, 1, 2, 2.9092974268256819, 2, 2,
        -1, -1, -1.8414709848078965, -1}},
    jr_args = {{shape = {3, 3}, values = {2.3782116141076979, 0, 0, 0, 2.1248440509641426, 0, 0,
        0, 2.6483627670417675}}, {shape = {3, 4}, values = {1.8414709848078965, 1, 1, 1, 2,
        2.9092974268256819, 2, 2, -1, -1, -1.8414709848078965, -1}}},
    jf_args = {{shape = {3, 3}, values = {2.3782116141076979, 0, 0, 0, 2.1248440509641426, 0, 0,
        0, 2.6483627670417675}}, {shape = {3, 4}, values = {1.8414709848078965, 1, 1, 1, 2,
        2.9092974268256819, 2, 2, -1, -1, -1.8414709848078965, -1}}},
    jr_aux = {{shape = {3, 3}, values = {2.7182818284590451, 0, 0, 0, 7.3890560989306504, 0, 0, 0,
        0.36787944117144233}}, {shape = {}, values = {2}}},
    jf_aux = {{shape = {3, 3}, values = {2.7182818284590451, 0, 0, 0, 7.3890560989306504, 0, 0, 0,
        0.36787944117144233}}, {shape = {}, values = {2}}},
    jr_dict = {a = {shape = {3, 3}, values = {0.54030230586813977, 0, 0, 0, -0.41614683654714241,
        0, 0, 0, 0.54030230586813977}}, b = {shape = {3}, values = {2, 4, -2}}},
    jf_dict = {a = {shape = {3, 3}, values = {0.54030230586813977, 0, 0, -0, -0.41614683654714241,
        -0, 0, 0, 0.54030230586813977}}, b = {shape = {3}, values = {2, 4, -2}}},
    jr_tuple = {{shape = {3, 3}, values = {0.54030230586813977, 0, 0, 0, -0.41614683654714241, 0,
        0, 0, 0.54030230586813977}}, {shape = {3, 3}, values = {2, 0, 0, 2, 1, 0, -1, 0, 1}}},
    hess = {shape = {3, 3}, values = {-0.60233735787951348, 0.12415546932099736,
        1.0806046117362795, 0.12415546932099736, -2.6508885267456486, 0.12415546932099736,
        1.0806046117362795, 0.12415546932099736, 2.7635465813520725}},
    hess_arg1 = {shape = {3, 3}, values = {3, 0, 0, 0, 12, 0, 0, 0, 12}},
    fc_eval = {shape = {2, 2}, values = {-1.3531008025908899, 1.324288539257432,
        1.2879364225560557, 1.6990513856765763}},
    fc_train = {shape = {2, 2}, values = {-1.3999951613917774, -0.29996440394399804,
        1.5999951613917773, 0.69996440394399773}},
    fc_train_rm = {{shape = {2}, values = {0.28749999999999998, -0.38550000000000006}},
        {shape = {2}, values = {2.1100050000000001, 0.46404500000000004}}},
    fc_params_only = {shape = {2, 2}, values = {-1.0700000000000003, -1.7899999999999998,
        1.4199999999999999, -2.3200000000000003}},
    ens_w = {shape = {2, 2, 3}, values = {0.29999999999999999, 1.1000000000000001,
        -0.20000000000000001, -0.5, 0.69999999999999996, 0.40000000000000002, 0.59999999999999998,
        2.2000000000000002, -0.40000000000000002, -1, 1.3999999999999999, 0.80000000000000004}},
    ens_b = {shape = {2, 2}, values = {0.5, -1.5, -0.5, 1.5}},
    ens_out = {shape = {2, 2, 2}, values = {-1.0700000000000003, -1.7899999999999998,
        1.4199999999999999, -2.3200000000000003, -3.6400000000000006, 0.92000000000000037,
        1.3400000000000001, -0.14000000000000012}},
}

local function t64(v)
    return tide.tensor(v, { dtype = "float64" })
end

local X = t64({ { 0.5, -1.2, 2.0 }, { 1.5, 0.3, -0.7 } })
local Y = t64({ { 0.2, 0.1, -0.4 }, { 1.0, -2.0, 0.5 } })
local W = t64({ { 0.3, -0.5 }, { 1.1, 0.7 }, { -0.2, 0.4 } })
local v = t64({ 1.0, 2.0, -1.0 })
local u = t64({ 0.5, -1.5 })
local A = tide.stack({ X, Y })
local B = tide.stack({ W, W * 2 - 0.1 })
local w5 = t64({ 0.7, -0.3, 1.2, 0.4 })

-- got (a tensor, or a table of them) against PyTorch's {shape =, values =} (or a table of
-- those: lists by position, dicts by name)
local function same(want, got, what)
    if want.shape == nil then
        assert(type(got) == "table" and not tide.is_tensor(got),
            what .. ": expected a table, got " .. tostring(got))
        local nw, ng = 0, 0
        for k, w in pairs(want) do
            nw = nw + 1
            same(w, got[k], what .. "." .. tostring(k))
        end
        for _ in pairs(got) do
            ng = ng + 1
        end
        assert.are.equal(nw, ng, what .. ": number of entries")
        return
    end
    assert(tide.is_tensor(got), what .. ": expected a tensor, got " .. tostring(got))
    assert.are.same(want.shape, got.shape, what .. ": shape")
    assert.are.equal("float64", got.dtype, what .. ": dtype")
    local flat = got:reshape(-1):totable()
    for k, w in ipairs(want.values) do
        assert(math.abs(flat[k] - w) <= 1e-10 * math.max(1, math.abs(w)),
            ("%s: element %d is %.17g, PyTorch's %.17g"):format(what, k, flat[k], w))
    end
end

local function raises(text, fn, ...)
    local ok, err = pcall(fn, ...)
    assert.is_false(ok, "expected an error")
    assert.matches(text, tostring(err), 1, true)
end

describe("tide.func values against PyTorch 1.13's functorch", function()
    describe("vmap", function()
        it("in_dims: a number, nil for an argument, a nested table", function()
            same(R.v_sum, func.vmap(function(x) return x:sin() * x:sum(1) end)(X), "sum(0)")
            same(R.v_in1, func.vmap(function(x) return x * x:sum() end, { in_dims = 2 })(X),
                "in_dims = 2")
            same(R.v_none, func.vmap(function(x, w) return x:matmul(w) end,
                { in_dims = { 1, nil } })(X, W), "in_dims = {1, nil}")
            same(R.v_none, func.vmap(function(x, w) return x:matmul(w) end, { 1, false })(X, W),
                "in_dims by position, false")
            same(R.v_dict, func.vmap(function(d) return d.a * d.b:sum() end,
                { in_dims = { { a = 1, b = nil } } })({ a = X, b = v }), "nested in_dims")
        end)

        it("out_dims, nesting, several results and tables of results", function()
            same(R.v_out1, func.vmap(function(x) return x * 2 end, { out_dims = 2 })(X),
                "out_dims = 2")
            local inner = func.vmap(function(a, b) return a * b end, { in_dims = { nil, 1 } })
            same(R.v_nested, func.vmap(inner, { in_dims = { 1, nil } })(u, v), "vmap(vmap)")
            local s, p = func.vmap(function(x) return x:sum(), x * x end,
                { out_dims = { 1, 2 } })(X)
            same(R.v_tuple, { s, p }, "a tuple of results")
            same(R.v_dictout, func.vmap(function(x)
                return { s = x:sum(1), p = x * x }
            end)(X), "a dict of results")
        end)

        it("ops with dims: indexing, matmul, sum over a dim, keepdim, slicing", function()
            same(R.v_index, func.vmap(function(x) return x[2] + x[-1] end)(X), "x[2] + x[-1]")
            same(R.v_matmul, func.vmap(tide.matmul)(A, B), "matmul")
            same(R.v_sumdim, func.vmap(function(m) return m:sum(2) end)(A), "sum(2)")
            same(R.v_sumkeep, func.vmap(function(m) return m:sum(1, true) end,
                { in_dims = 3 })(A), "sum(1, keepdim) over in_dims = 3")
            same(R.v_slice, func.vmap(function(x) return x:narrow(1, 2, 2) end)(X), "x[1:]")
        end)

        it("chunk_size (PyTorch 2's) gives the same values", function()
            same(R.v_matmul, func.vmap(tide.matmul, { chunk_size = 1 })(A, B), "chunk_size")
        end)

        it("randomness: error raises, same repeats the draws, different not", function()
            -- PyTorch: "vmap: called random operation while in randomness error mode. ..."
            raises("tide: func.vmap: f drew random numbers under randomness = \"error\"",
                func.vmap(function(x) return x + tide.rand(3,
                { dtype = "float64" }) end), X)
            tide.manual_seed(0)
            local s = func.vmap(function(x) return x * 0 + tide.rand(3, { dtype = "float64" }) end,
                { randomness = "same" })(X)
            local d = func.vmap(function(x) return x * 0 + tide.rand(3, { dtype = "float64" }) end,
                { randomness = "different" })(X)
            assert.are.equal(R.v_same_equal, s[1]:equal(s[2]))
            assert.are.equal(R.v_diff_equal, d[1]:equal(d[2]))
        end)
    end)

    describe("grad and grad_and_value", function()
        local function f2(x, y)
            return (x * y):sum() + x:pow(2):sum()
        end

        it("argnums: a number and a table; has_aux", function()
            same(R.g_arg1, func.grad(f2, { argnums = 2 })(X, Y), "argnums = 2")
            same(R.g_args, func.grad(f2, { argnums = { 1, 2 } })(X, Y), "argnums = {1, 2}")
            local g, aux = func.grad(function(x) return x:pow(3):sum(), x:sum(2) end,
                { has_aux = true })(X)
            same(R.g_aux, { g, aux }, "has_aux")
        end)

        it("grad_and_value, with has_aux", function()
            same(R.gv, { func.grad_and_value(function(x) return x:sin():sum() end)(X) }, "gv")
            -- PyTorch's (grad, (value, aux)) is tide's grad, value, aux (multiple values)
            local g, value, aux = func.grad_and_value(function(x, y)
                return (x * y):sum(), { m = x * y }
            end, { argnums = 2, has_aux = true })(X, Y)
            same(R.gv_aux, { g, { value, aux } }, "gv has_aux")
        end)

        it("raise for outputs that are not scalar tensors", function()
            -- PyTorch: "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor,
            -- got tensor with 2 dims. Maybe you wanted to use the vjp or jacrev APIs instead?"
            raises("tide: func.grad: f must return a scalar tensor (no dims), got one of " ..
                "shape {2, 3}", func.grad(function(x) return x * 2 end), X)
            raises("tide: func.grad: f must return a scalar tensor, got a number",
                func.grad(function() return 3.0 end), X)
            raises("tide: func.grad_and_value: f must return a scalar tensor (no dims)",
                func.grad_and_value(function(x) return x * 2 end), X)
        end)
    end)

    describe("vjp and jvp", function()
        it("vjp: several outputs, has_aux", function()
            local o, fn = func.vjp(function(x, y) return { x * y, x + y:sin() } end, X, Y)
            same(R.vjp_out, o, "vjp output")
            same(R.vjp_g, { fn({ tide.ones({ 2, 3 }, { dtype = "float64" }), X }) }, "vjp_fn")
            local o2, fn2, aux = func.vjp(function(x) return x:exp() * x, x:sum() end, v,
                { has_aux = true })
            -- vjp_fn's tuple (one per primal) is its multiple values
            same(R.vjp_aux, { o2, { fn2(v) }, aux }, "vjp has_aux")
        end)

        it("jvp: values, has_aux", function()
            same(R.jvp1, { func.jvp(function(x) return x:sin() * x end, { X }, { Y }) }, "jvp")
            same(R.jvp_aux, { func.jvp(function(x, y)
                return x:matmul(y), { n = x:sum() }
            end, { X, W }, { Y, W * 0.5 }, { has_aux = true }) }, "jvp has_aux")
        end)

        it("jvp takes PyTorch's strict", function()
            same(R.jvp_strict, { func.jvp(function(x) return x * 3 end, { v }, { v },
                { strict = false }) }, "strict = false")
            same(R.jvp_strict, { func.jvp(function(x) return x * 3 end, { v }, { v },
                { strict = true }) }, "strict = true")
            -- PyTorch: zeros; with strict=True "jvp(f, primals, tangents, strict=True): The
            -- output of f is independent of the inputs. This is not allowed with strict=True."
            local function const()
                return tide.ones({ 2 }, { dtype = "float64" })
            end
            local o, jv = func.jvp(const, { v }, { v })
            same({ shape = { 2 }, values = { 1, 1 } }, o, "independent output")
            same({ shape = { 2 }, values = { 0, 0 } }, jv, "its zero tangent")
            raises("tide: func.jvp: {strict = true}: f's output does not depend on the primals",
                func.jvp, const, { v }, { v }, { strict = true })
        end)
    end)

    describe("jacrev, jacfwd and hessian", function()
        local function h(x)
            return x:sin() * x:sum()
        end
        local function k(x, y)
            return x * y:sum() + y:narrow(1, 1, 3) * x:sin()
        end
        local function ka(x)
            return x:exp(), x:sum()
        end
        local function kd(x)
            return { a = x:sin(), b = (x * x):sum() }
        end

        it("values, argnums as a number and a table", function()
            same(R.jr, func.jacrev(h)(v), "jacrev")
            same(R.jf, func.jacfwd(h)(v), "jacfwd")
            same(R.jr_arg1, func.jacrev(k, { argnums = 2 })(v, w5), "jacrev argnums = 2")
            same(R.jf_arg1, func.jacfwd(k, { argnums = 2 })(v, w5), "jacfwd argnums = 2")
            same(R.jr_args, func.jacrev(k, { argnums = { 1, 2 } })(v, w5), "jacrev {1, 2}")
            same(R.jf_args, func.jacfwd(k, { argnums = { 1, 2 } })(v, w5), "jacfwd {1, 2}")
        end)

        it("has_aux and outputs that are tables", function()
            same(R.jr_aux, { func.jacrev(ka, { has_aux = true })(v) }, "jacrev has_aux")
            same(R.jf_aux, { func.jacfwd(ka, { has_aux = true })(v) }, "jacfwd has_aux")
            same(R.jr_dict, func.jacrev(kd)(v), "jacrev of a dict")
            same(R.jr_dict, func.jacrev(kd, { chunk_size = 2 })(v), "jacrev chunk_size")
            same(R.jf_dict, func.jacfwd(kd)(v), "jacfwd of a dict")
            same(R.jr_tuple, func.jacrev(function(x) return { x:sin(), x[1] * x } end)(v),
                "jacrev of a list")
        end)

        it("hessian, argnums", function()
            same(R.hess, func.hessian(function(x) return (x:sin() * x:sum()):sum() end)(v),
                "hessian")
            same(R.hess_arg1, func.hessian(function(x, y) return (x * y:pow(3)):sum() end,
                { argnums = 2 })(v, t64({ 0.5, 1.0, -2.0 })), "hessian argnums = 2")
        end)
    end)

    describe("functional_call and stack_module_state", function()
        local function model()
            return nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
        end
        local function pb()
            -- PyTorch's "0.weight" ... "1.running_var": Sequential's names are 1-based in tide
            return { ["1.weight"] = W:t():contiguous(), ["1.bias"] = u:clone(),
                ["2.weight"] = t64({ 1.5, -0.5 }), ["2.bias"] = t64({ 0.1, 0.2 }),
                ["2.running_mean"] = t64({ 0.3, -0.2 }), ["2.running_var"] = t64({ 2.0, 0.5 }) }
        end

        it("a module with parameters and buffers, eval and train", function()
            local m = model():double()
            m:eval()
            same(R.fc_eval, func.functional_call(m, pb(), { X }), "eval")
            m:train()
            local p2 = pb()
            same(R.fc_train, func.functional_call(m, p2, { X }), "train")
            -- PyTorch's batch norm updates the buffers it was given, in place
            same(R.fc_train_rm, { p2["2.running_mean"], p2["2.running_var"] }, "buffers")
            same(R.fc_params_only, func.functional_call(nn.Linear(3, 2):double(),
                { weight = W:t():contiguous(), bias = u }, X), "one tensor argument")
            local p3 = pb()
            local params = { ["1.weight"] = p3["1.weight"], ["1.bias"] = p3["1.bias"],
                ["2.weight"] = p3["2.weight"], ["2.bias"] = p3["2.bias"] }
            local buffers = { ["2.running_mean"] = p3["2.running_mean"],
                ["2.running_var"] = p3["2.running_var"], ["2.num_batches_tracked"] =
                tide.tensor(0, { dtype = "int64" }) }
            m:eval()
            same(R.fc_eval, func.functional_call(m, { params, buffers }, { X }, nil,
                { strict = true }), "a table of dicts, strict")
        end)

        it("strict and tie_weights (PyTorch 2's options)", function()
            local m = nn.Sequential(nn.Linear(3, 3, { bias = false }),
                nn.Linear(3, 3, { bias = false })):double()
            m[2].weight = m[1].weight
            local e = tide.eye(3, { dtype = "float64" }) * 2
            -- tie_weights = true (the default): the tensor replaces both names of the tied one
            same({ shape = { 3 }, values = { 4, 8, -4 } },
                func.functional_call(m, { ["1.weight"] = e }, v), "tied")
            same({ shape = { 3 }, values = { 4, 8, -4 } },
                func.functional_call(m, { ["1.weight"] = e }, v, nil, { strict = true }),
                "tied names count as given for strict")
            local own = m[2].weight:matmul(v)
            same({ shape = { 3 }, values = own:totable() }, func.functional_call(m,
                { ["1.weight"] = e }, v, nil, { tie_weights = false }) * 0.5, "untied")
            raises("tide: func.functional_call: got different tensors for '1.weight', " ..
                "'2.weight', which are tied", func.functional_call, m,
                { ["1.weight"] = e, ["2.weight"] = e * 2 }, v)
            raises("tide: func.functional_call: {strict = true}: error(s) in reparametrizing " ..
                "for Linear: unexpected key(s) 'foo'; missing key(s) 'bias'",
                func.functional_call, nn.Linear(3, 2):double(), { weight = W:t(), foo = v }, X,
                nil, { strict = true })
        end)

        it("stack_module_state and an ensemble (combine_state_for_ensemble's values)",
            function()
                local ms = { nn.Linear(3, 2):double(), nn.Linear(3, 2):double() }
                tide.no_grad(function()
                    ms[1].weight:copy_(W:t())
                    ms[1].bias:copy_(u)
                    ms[2].weight:copy_(W:t() * 2)
                    ms[2].bias:copy_(-u)
                end)
                local ps, bs = func.stack_module_state(ms)
                same(R.ens_w, ps.weight, "stacked weight")
                same(R.ens_b, ps.bias, "stacked bias")
                assert.is_true(ps.weight.requires_grad)
                local out = func.vmap(function(p, b, x)
                    return func.functional_call(ms[1], { p, b }, x)
                end, { in_dims = { 1, 1, nil } })(ps, bs, X)
                same(R.ens_out, out, "ensemble")
            end)
    end)
end)
