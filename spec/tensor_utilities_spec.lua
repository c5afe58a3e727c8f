-- tensor_utilities_spec.lua — PyTorch's small utilities a ported script reaches for, against
-- PyTorch 1.13's values and gradients (spec/fixtures/tensor_utilities_torch.lua, written by
-- spec/fixtures/make_tensor_utilities.py): broadcast_tensors / broadcast_shapes, result_type,
-- promote_types, can_cast and the small queries, diagflat, frexp, gradient, put_, logspace,
-- histogram, unravel_index; the random ones (normal, randint_like, poisson, seed,
-- initial_seed) by their properties; errors, unknown options, mixed devices, and failed calls
-- that leave their tensor unchanged.
local tide = require("tide")
local D = require("spec.support.device")
local P = require("spec.support.porting")

local T = dofile("spec/fixtures/tensor_utilities_torch.lua")
local DEV = D.name

local function t64(v)
    return P.t64(v, DEV)
end

local function ids(v)
    return tide.tensor(v, { dtype = "int64", device = DEV })
end

local function vals(t)
    return t:to("cpu"):totable()
end

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

-- err carries exactly msg after its position
local function raises(msg, f)
    local err = catch(f)
    assert.are.equal(msg, err:match("tide:.*$"))
end

describe("PyTorch's utilities, values and gradients (" .. DEV .. ")", function()
    local function r(x, ...)
        return x:reshape(...)
    end
    local function stack(...)
        return tide.stack({ ... })
    end
    local PUT = ids(T.PUT_IDX)
    local CASES = {
        broadcast_tensors = { function(a, b)
            local x, y = tide.broadcast_tensors(r(a, 3, 1), b)
            return stack(x, y) * tide.arange(1, 25, { dtype = "float64", device = DEV })
                :reshape(2, 3, 4)
        end, T.S3, T.S4 },
        diagflat = { function(x) return tide.diagflat(r(x, 2, 2)) end, T.S4 },
        diagflat_offset = { function(x) return x:diagflat(1) end, T.S3 },
        diagflat_negative = { function(x) return tide.diagflat(x, -2) end, T.S3 },
        frexp_mantissa = { function(x) return (x:frexp()) end, T.FR },
        gradient = { function(x) return stack(tide.gradient(r(x, 3, 4))) end, T.S12 },
        gradient_spacing = { function(x)
            return stack(tide.gradient(r(x, 3, 4), { spacing = 0.5, dim = 2 }))
        end, T.S12 },
        gradient_list = { function(x)
            return stack(tide.gradient(r(x, 3, 4), { spacing = { 2.0, 0.25 } }))
        end, T.S12 },
        gradient_order2 = { function(x)
            return stack(tide.gradient(r(x, 3, 4), { edge_order = 2 }))
        end, T.S12 },
        gradient_coords = { function(x)
            return stack(tide.gradient(r(x, 3, 4), { spacing = { t64(T.COORD) }, dim = 2 }))
        end, T.S12 },
        gradient_coords2 = { function(x)
            return stack(tide.gradient(r(x, 3, 4), { spacing = { t64(T.COORD) }, dim = 2,
                edge_order = 2 }))
        end, T.S12 },
        put_accumulate = { function(x, s)
            return x:clone():reshape(3, 4):put_(PUT, s, true)
        end, T.S12, T.PUT_SRC },
        put = { function(x, s)
            return tide.put(x:reshape(3, 4), PUT:narrow(1, 1, 3), s)
        end, T.S12, { T.PUT_SRC[1], T.PUT_SRC[2], T.PUT_SRC[3] } },
    }
    P.run_cases(it, T, CASES, function(name, fn, ...)
        P.check_case(T.cases[name], name, DEV, {}, fn, ...)
    end)

    it("frexp's exponents are int32 and give back the input", function()
        local x = t64(T.FR)
        local m, e = tide.frexp(x)
        assert.are.equal("int32", e.dtype)
        assert.are.same(T.values.frexp_exponent, vals(e))
        P.close(T.FR, m * (e:to("float64") * 0 + 2):pow(e:to("float64")), 1e-15, "m 2^e")
        local s, se = tide.frexp(tide.tensor({ 0, math.huge, -math.huge }, { device = DEV }))
        assert.are.same({ 0, math.huge, -math.huge }, vals(s))
        assert.are.same({ 0, 0, 0 }, vals(se))
        local h = tide.frexp(tide.tensor({ 3, 0.1 }, { dtype = "float16", device = DEV }))
        assert.are.equal("float16", h.dtype)
        P.close({ 0.75, 0.8 }, h, 1e-3, "float16")
    end)

    it("logspace", function()
        local V = T.values
        local o = { dtype = "float64", device = DEV }
        P.close(V.logspace, tide.logspace(0, 2, 5, o), 1e-14, "logspace")
        P.close(V.logspace_base2, tide.logspace(-1, 1, 4, 2, o), 1e-14, "base 2")
        P.close(V.logspace_one, tide.logspace(3, 5, 1, o), 1e-14, "one step")
        local f = tide.logspace(-2, 3, 7, { device = DEV })
        assert.are.equal("float32", f.dtype)
        assert.are.equal(tide.device(DEV), f.device)
        P.close(V.logspace_f32, f, 1e-6, "float32")
        assert.are.same({ 0 }, tide.logspace(0, 1, 0).shape)
    end)

    it("histogram", function()
        local H = T.values.histogram
        local x = t64(T.S12)
        local function check(name, ...)
            local h, e = tide.histogram(x, ...)
            P.close(H[name].hist, h, 1e-14, name .. " hist")
            P.close(H[name].edges, e, 1e-14, name .. " edges")
            assert.are.equal("float64", h.dtype)
        end
        check("bins4", 4)
        check("range", 3, { range = { -1, 1 } })
        local w = {}
        for i = 1, 3 do
            for _, v in ipairs(T.PUT_SRC) do
                w[#w + 1] = v
            end
        end
        check("weight", 5, { weight = t64(w) })
        check("density", 4, { density = true })
        local edges = t64({ -3, -1, 0, 0.5, 3 })
        check("edges", edges)
        check("edges_density", edges, { density = true })
        local h2 = x:histogram(4)
        P.close(H.bins4.hist, h2, 1e-14, "method")
    end)
end)

describe("dtype questions (" .. DEV .. ")", function()
    local DTYPES = { "bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32",
        "float64" }
    -- PyTorch 1.13's torch.result_type(torch.zeros(2, dtype=a), torch.zeros((), dtype=b)),
    -- b in DTYPES' order
    local ZERO_DIM = {
        bool = { "bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64" },
        uint8 = { "uint8", "uint8", "uint8", "uint8", "float16", "bfloat16", "float32", "float64" },
        int32 = { "int32", "int32", "int32", "int32", "float16", "bfloat16", "float32", "float64" },
        int64 = { "int64", "int64", "int64", "int64", "float16", "bfloat16", "float32", "float64" },
        float16 = { "float16", "float16", "float16", "float16", "float16", "float16", "float16",
            "float16" },
        bfloat16 = { "bfloat16", "bfloat16", "bfloat16", "bfloat16", "bfloat16", "bfloat16",
            "bfloat16", "bfloat16" },
        float32 = { "float32", "float32", "float32", "float32", "float32", "float32", "float32",
            "float32" },
        float64 = { "float64", "float64", "float64", "float64", "float64", "float64", "float64",
            "float64" },
    }
    it("promote_types, can_cast and result_type follow PyTorch and tide's add", function()
        for _, a in ipairs(DTYPES) do
            for j, b in ipairs(DTYPES) do
                assert.are.equal(T.values.promote_types[a][b], tide.promote_types(a, b), a .. b)
                assert.are.equal(T.values.can_cast[a][b], tide.can_cast(a, b), a .. b)
                local x = tide.zeros({ 2 }, { dtype = a, device = DEV })
                local y = tide.zeros({ 1 }, { dtype = b, device = DEV })
                assert.are.equal((x + y).dtype, tide.result_type(x, y), a .. b)
                -- a 0-d tensor beside one with dims counts as a number of its dtype (PyTorch's
                -- dimension categories): add, where and result_type agree with PyTorch
                local z = tide.zeros({}, { dtype = b, device = DEV })
                local want = ZERO_DIM[a][j]
                assert.are.equal(want, (x + z).dtype, a .. " + 0-d " .. b)
                assert.are.equal(want, (z * x).dtype, "0-d " .. b .. " * " .. a)
                assert.are.equal(want, tide.result_type(x, z), a .. b)
                assert.are.equal(want, tide.result_type(z, x), b .. a)
                assert.are.equal(want, tide.where(x:eq(x), x, z).dtype, "where " .. a .. b)
                -- two 0-d tensors promote by dtype, as two with dims
                assert.are.equal(T.values.promote_types[a][b],
                    (tide.zeros({}, { dtype = a, device = DEV }) + z).dtype, a .. b)
            end
            local x = tide.zeros({ 2 }, { dtype = a, device = DEV })
            local want = T.values.result_type_number[a]
            assert.are.equal(want.int, tide.result_type(x, 2), a)
            assert.are.equal(want.float, tide.result_type(2.5, x), a)
            assert.are.equal(want.bool, tide.result_type(x, true), a)
            assert.are.equal((x + 2.5).dtype, tide.result_type(x, 2.5), a)
        end
        assert.are.equal("int64", tide.result_type(1, 2))
        assert.are.equal("float32", tide.result_type(1, 2.5))
        raises('tide: promote_types: argument #2 must be a dtype name, got "int8"; use ' ..
            '"float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8" or "bool"',
            function() return tide.promote_types("float32", "int8") end)
        raises("tide: result_type: argument #1 must be a tensor or a number, got string",
            function() return tide.result_type("x", 1) end)
        raises("tide: can_cast: argument #1 must be a dtype name, got nil; use " ..
            '"float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8" or "bool"',
            function() return tide.can_cast(nil, "float32") end)
    end)

    it("finfo and iinfo give torch.finfo's and torch.iinfo's fields", function()
        local f = tide.finfo("float32")
        assert.are.same({ dtype = "float32", bits = 32, eps = 1.1920928955078125e-07,
            max = 3.4028234663852886e+38, min = -3.4028234663852886e+38,
            tiny = 1.1754943508222875e-38, smallest_normal = 1.1754943508222875e-38,
            resolution = 1e-06 }, f)
        assert.are.equal(tide.get_default_dtype(), tide.finfo().dtype)
        assert.are.equal(65504, tide.finfo("float16").max)
        assert.are.equal(0.0009765625, tide.finfo("float16").eps)
        assert.are.equal(6.103515625e-05, tide.finfo("float16").tiny)
        assert.are.equal(0.0078125, tide.finfo("bfloat16").eps)
        assert.are.equal(2.220446049250313e-16, tide.finfo("float64").eps)
        -- each limit is the dtype's: max stays finite, the next step up does not
        for _, dt in ipairs({ "float32", "float16", "bfloat16", "float64" }) do
            local i = tide.finfo(dt)
            local t = tide.tensor({ i.max, i.min, i.tiny, 1 + i.eps }, { dtype = dt })
            assert.are.same({ i.max, i.min, i.tiny, 1 + i.eps }, t:double():totable(), dt)
            assert.is_true(tide.tensor(i.max, { dtype = dt }):mul(2):isinf():item(), dt)
        end
        assert.are.same({ dtype = "int32", bits = 32, min = -2147483648, max = 2147483647 },
            tide.iinfo("int32"))
        assert.are.same({ dtype = "uint8", bits = 8, min = 0, max = 255 }, tide.iinfo("uint8"))
        assert.are.equal(64, tide.iinfo("int64").bits)
        assert.is_true(tide.iinfo("int64").max > 9.2e18)
        assert.matches("tide: finfo: int64 is not a floating%-point dtype; use tide.iinfo",
            select(2, pcall(tide.finfo, "int64")))
        assert.matches("tide: iinfo: float32 is not an integer dtype; use tide.finfo",
            select(2, pcall(tide.iinfo, "float32")))
        assert.matches("tide: iinfo: bool has no limits",
            select(2, pcall(tide.iinfo, "bool")))
        assert.matches("tide: finfo: expected a dtype name, got a tensor; use tide.finfo%(t.dtype%)",
            select(2, pcall(tide.finfo, tide.zeros(1))))
    end)

    it("is_floating_point, numel, detach, positive, isreal", function()
        local x = t64({ { 1, 2, 3 }, { 4, 5, 6 } }):requires_grad_(true)
        assert.is_true(tide.is_floating_point(x))
        assert.is_false(tide.is_floating_point(ids({ 1 })))
        assert.are.equal(6, tide.numel(x))
        local d = tide.detach(x)
        assert.is_false(d.requires_grad)
        assert.are.same(vals(x), vals(d))
        assert.are.equal(x, tide.positive(x))
        assert.are.equal(x, x:positive())
        local re = tide.isreal(x)
        assert.are.equal("bool", re.dtype)
        assert.are.equal(tide.device(DEV), re.device)
        assert.are.same({ { true, true, true }, { true, true, true } }, vals(x:isreal()))
        raises("tide: positive: not defined on a bool tensor (as PyTorch's); convert it with " ..
            ':to("int64") first', function()
                return tide.positive(tide.tensor({ true }, { device = DEV }))
            end)
        raises("tide: isreal: expected a tensor at argument #1, got number",
            function() return tide.isreal(1) end)
    end)
end)

describe("broadcasting (" .. DEV .. ")", function()
    it("broadcast_shapes gives a table; broadcast_tensors views", function()
        assert.are.same({ 3, 2 }, tide.broadcast_shapes({ 3, 1 }, { 2 }))
        assert.are.same({ 4, 3, 2 }, tide.broadcast_shapes(2, { 3, 1 }, { 4, 1, 1 }))
        assert.are.same({}, tide.broadcast_shapes({}, {}))
        assert.are.same({ 0, 3 }, tide.broadcast_shapes({ 0, 1 }, { 3 }))
        local a = t64({ 1, 2, 3 })
        local b = t64({ { 10 }, { 20 } })
        local x, y = tide.broadcast_tensors(a, b)
        assert.are.same({ { 1, 2, 3 }, { 1, 2, 3 } }, vals(x))
        assert.are.same({ { 10, 10, 10 }, { 20, 20, 20 } }, vals(y))
        assert.are.same({ 0, 1 }, x:stride()) -- a view, as expand
        local list = tide.broadcast_tensors({ a, b })
        assert.are.equal(2, #list)
        assert.are.same({ 2, 3 }, list[2].shape)
        raises("tide: broadcast_shapes: shapes {2, 3}, {4} cannot be broadcast: dim -1 has " ..
            "sizes 3 and 4; sizes must match or be 1",
            function() return tide.broadcast_shapes({ 2, 3 }, { 4 }) end)
        raises("tide: broadcast_tensors: shapes {3}, {2} cannot be broadcast: dim -1 has " ..
            "sizes 3 and 2; sizes must match or be 1",
            function() return tide.broadcast_tensors(a, t64({ 1, 2 })) end)
        raises("tide: broadcast_tensors: expected a tensor at argument #2, got number",
            function() return tide.broadcast_tensors(a, 2) end)
        raises("tide: broadcast_shapes: size -1 of argument #1 is negative; sizes are >= 0",
            function() return tide.broadcast_shapes({ -1 }) end)
    end)

    it("needs its tensors on one device", function()
        local a = t64({ 1, 2 })
        local b = tide.zeros({ 2 }, { dtype = "float64", device = D.other })
        local err = catch(function() return tide.broadcast_tensors(a, b) end)
        assert.matches("tide: broadcast_tensors: expected all tensors on the same device",
            err, 1, true)
        assert.matches("move one with :to", err, 1, true)
    end)
end)

describe("put_, put and unravel_index (" .. DEV .. ")", function()
    it("write at flat 1-based positions, negatives from the end", function()
        local x = tide.zeros({ 2, 3 }, { dtype = "float64", device = DEV })
        x:put_(ids({ 1, -1, 5 }), t64({ 7, 8, 9 }))
        assert.are.same({ { 7, 0, 0 }, { 0, 9, 8 } }, vals(x))
        -- a non-contiguous tensor: positions follow its own row-major order
        local y = tide.zeros({ 3, 2 }, { dtype = "float64", device = DEV }):t()
        y:put_(ids({ 2 }), t64({ 5 }))
        assert.are.same({ { 0, 5, 0 }, { 0, 0, 0 } }, vals(y))
        local s = tide.zeros({}, { dtype = "float64", device = DEV })
        s:put_(ids({ 1, 1 }), t64({ 2, 3 }), true)
        assert.are.equal(5, s:item())
        local z = tide.zeros({ 4 }, { dtype = "float64", device = DEV })
        local p = z:put(ids({ 2 }), t64({ 1 }))
        assert.are.same({ 0, 0, 0, 0 }, vals(z))
        assert.are.same({ 0, 1, 0, 0 }, vals(p))
    end)

    it("refuse bad arguments and leave the tensor unchanged", function()
        local x = t64({ 1, 2, 3 })
        raises("tide: put_: index 4 is out of range for 3 elements; use 1..3 or -3..-1",
            function() return x:put_(ids({ 1, 4 }), t64({ 5, 6 })) end)
        raises("tide: put_: index 0 is out of range for 3 elements; use 1..3 or -3..-1",
            function() return x:put_(ids({ 1, 0 }), t64({ 5, 6 })) end)
        raises("tide: put_: index {2} has 2 elements and source {3} has 3; they must have as " ..
            "many", function() return x:put_(ids({ 1, 2 }), t64({ 5, 6, 7 })) end)
        raises('tide: put_: source is float32 and the tensor float64; they must match (as ' ..
            'PyTorch\'s); convert source with :to("float64")',
            function()
                return x:put_(ids({ 1 }), tide.tensor({ 5.5 }, { device = DEV }))
            end)
        raises("tide: put_: index must be an int64 or int32 tensor, got float64",
            function() return x:put_(t64({ 1 }), t64({ 5 })) end)
        raises("tide: put_: accumulate must be a boolean, got number",
            function() return x:put_(ids({ 1 }), t64({ 5 }), 1) end)
        raises("tide: put: index 9 is out of range for 3 elements; use 1..3 or -3..-1",
            function() return x:put(ids({ 9 }), t64({ 5 })) end)
        local other = tide.tensor({ 5 }, { dtype = "float64", device = D.other })
        local err = catch(function() return x:put_(ids({ 1 }), other) end)
        assert.matches("tide: put_: expected all tensors on the same device", err, 1, true)
        assert.are.same({ 1, 2, 3 }, vals(x))
        local leaf = t64({ 1, 2 }):requires_grad_(true)
        raises("tide: put_: in-place operation on a leaf tensor that requires grad; wrap it " ..
            "in tide.no_grad or use detach()",
            function() return leaf:put_(ids({ 1 }), t64({ 5 })) end)
        local e = t64({ 1 }):expand(3)
        raises("tide: put_: the tensor is an expanded view (stride 0 at dim 1), so several " ..
            "positions would land on one element; call :clone() first",
            function() return e:put_(ids({ 1 }), t64({ 5 })) end)
        assert.are.same({ 1, 2 }, vals(leaf))
        assert.are.same({ 1, 1, 1 }, vals(e))
    end)

    it("unravel_index: one 1-based index tensor per dim", function()
        local i, j = tide.unravel_index(ids({ { 1, 5 }, { 6, 3 } }), { 2, 3 })
        assert.are.same({ { 1, 2 }, { 2, 1 } }, vals(i))
        assert.are.same({ { 1, 2 }, { 3, 3 } }, vals(j))
        assert.are.equal(tide.device(DEV), i.device)
        local a, b, c = tide.unravel_index(24, { 2, 3, 4 })
        assert.are.same({ 2, 3, 4 }, { a:item(), b:item(), c:item() })
        assert.are.equal("int64", a.dtype)
        raises("tide: unravel_index: index 7 is out of range for 6 elements; use 1..6",
            function() return tide.unravel_index(ids({ 7 }), { 2, 3 }) end)
        raises("tide: unravel_index: index 0 is out of range for 6 elements; use 1..6",
            function() return tide.unravel_index(0, { 2, 3 }) end)
        raises("tide: unravel_index: indices must be an integer tensor, got float64",
            function() return tide.unravel_index(t64({ 1 }), { 2, 3 }) end)
    end)
end)

describe("diagflat, frexp, gradient, logspace, histogram: errors (" .. DEV .. ")", function()
    it("name the fault", function()
        local x = t64({ 1, 2, 3, 4 })
        raises("tide: frexp: needs a floating-point tensor, got int64; convert with " ..
            ':to("float32")', function() return tide.frexp(ids({ 1 })) end)
        raises("tide: diagflat: offset must be an integer, got 1.5",
            function() return x:diagflat(1.5) end)
        raises('tide: gradient: unknown option "order"; options are spacing, dim, edge_order',
            function() return tide.gradient(x, { order = 2 }) end)
        raises("tide: gradient: edge_order = 3; expected 1 or 2",
            function() return tide.gradient(x, { edge_order = 3 }) end)
        raises("tide: gradient: dim 2 has size 2; edge_order 2 needs at least 3",
            function() return tide.gradient(t64({ { 1, 2 } }), { edge_order = 2, dim = 2 }) end)
        raises("tide: gradient: spacing has 1 entries for 2 dims; give one per dim (or one " ..
            "number)", function() return tide.gradient(x:reshape(2, 2), { spacing = { 1 } }) end)
        raises("tide: gradient: spacing 1: coordinates {3} must be 1-D of dim 1's size 4",
            function() return tide.gradient(x, { spacing = { t64({ 1, 2, 3 }) } }) end)
        local far = tide.tensor({ 0, 1, 2, 3 }, { dtype = "float64", device = D.other })
        assert.matches("tide: gradient: expected all tensors on the same device",
            catch(function() return tide.gradient(x, { spacing = { far } }) end), 1, true)
        raises('tide: logspace: unknown option "dtyp" (did you mean "dtype"?)',
            function() return tide.logspace(0, 1, 3, { dtyp = "float64" }) end)
        raises("tide: logspace: steps = -1; expected an integer >= 0",
            function() return tide.logspace(0, 1, -1) end)
        raises('tide: histogram: unknown option "weights" (did you mean "weight"?)',
            function() return tide.histogram(x, 2, { weights = x }) end)
        raises("tide: histogram: bins = 0; expected a count >= 1 or a tensor of edges",
            function() return tide.histogram(x, 0) end)
        raises("tide: histogram: needs a floating-point tensor, got int64; convert with " ..
            ':to("float32")', function() return tide.histogram(ids({ 1 }), 2) end)
        raises("tide: histogram: range {2, 1}: max must be >= min",
            function() return tide.histogram(x, 2, { range = { 2, 1 } }) end)
        assert.matches("tide: histogram: not differentiable",
            catch(function() return tide.histogram(x:requires_grad_(true), 2) end), 1, true)
        local w = tide.ones({ 4 }, { dtype = "float64", device = D.other })
        assert.matches("tide: histogram: expected all tensors on the same device",
            catch(function() return tide.histogram(t64({ 1, 2, 3, 4 }), 2, { weight = w }) end),
            1, true)
    end)

    it("t:bincount is tide.bincount", function()
        assert.are.same({ 1, 2, 0, 1 }, vals(ids({ 1, 2, 2, 4 }):bincount()))
        assert.are.same({ 1, 2, 0, 1, 0 }, vals(ids({ 1, 2, 2, 4 }):bincount({ minlength = 5 })))
    end)
end)

describe("random draws, by their properties (" .. DEV .. ")", function()
    local function same(a, b)
        return a:to("cpu"):equal(b:to("cpu"))
    end

    it("normal in its four overloads", function()
        tide.manual_seed(7)
        local mean = t64({ { 0 }, { 100 } })
        local std = t64({ 1, 2, 3 })
        local a = tide.normal(mean, std)
        assert.are.same({ 2, 3 }, a.shape)
        assert.are.equal("float64", a.dtype)
        assert.are.equal(tide.device(DEV), a.device)
        assert.is_true(a:select(1, 2):min():item() > 50)
        tide.manual_seed(7)
        assert.is_true(same(a, tide.normal(mean, std)))
        local b = tide.normal(mean, 0)
        assert.are.same({ { 0 }, { 100 } }, vals(b))
        local c = tide.normal(5, tide.zeros({ 3 }, { device = DEV }))
        assert.are.same({ 5, 5, 5 }, vals(c))
        assert.are.equal("float32", c.dtype)
        local d = tide.normal(2, 3, { 4000 }, { dtype = "float64", device = DEV })
        assert.are.same({ 4000 }, d.shape)
        assert.is_true(math.abs(d:mean():item() - 2) < 0.3)
        assert.is_true(math.abs(d:std():item() - 3) < 0.3)
        -- with grad: the draw requires grad, its gradients are zero (PyTorch's formulas)
        local m = t64({ 1, 2 }):requires_grad_(true)
        local s = t64({ 1, 1 }):requires_grad_(true)
        local g = tide.normal(m, s)
        assert.is_true(g.requires_grad)
        g:sum():backward()
        assert.are.same({ 0, 0 }, vals(m.grad))
        assert.are.same({ 0, 0 }, vals(s.grad))
        raises("tide: normal: std has elements below 0 (or NaN); expected std >= 0",
            function() return tide.normal(mean, t64({ 1, -1, 1 })) end)
        raises("tide: normal: std = -1; expected std >= 0",
            function() return tide.normal(0, -1, { 2 }) end)
        raises('tide: normal: unknown option "dtyp" (did you mean "dtype"?)',
            function() return tide.normal(0, 1, { 2 }, { dtyp = "float64" }) end)
        raises('tide: normal: unknown option "dtype"; with a tensor mean or std normal ' ..
            "takes only generator (the draw has their dtype and device)",
            function() return tide.normal(mean, 1, { dtype = "float64" }) end)
        raises("tide: normal: with a number mean and std, give the size: " ..
            "tide.normal(0, 1, {2, 3}), got nil", function() return tide.normal(0, 1) end)
        raises('tide: normal: mean must be a floating-point tensor, got int64; convert with ' ..
            ':to("float32")', function() return tide.normal(ids({ 1 }), 1) end)
        local far = tide.ones({ 3 }, { dtype = "float64", device = D.other })
        assert.matches("tide: normal: expected all tensors on the same device",
            catch(function() return tide.normal(mean, far) end), 1, true)
    end)

    it("randint_like, poisson, seed and initial_seed", function()
        tide.manual_seed(3)
        local t = tide.zeros({ 2, 50 }, { dtype = "int32", device = DEV })
        local a = tide.randint_like(t, 5)
        assert.are.same({ 2, 50 }, a.shape)
        assert.are.equal("int32", a.dtype)
        assert.are.equal(tide.device(DEV), a.device)
        assert.is_true(a:min():item() >= 0 and a:max():item() <= 4)
        local b = tide.randint_like(t, -3, 3, { dtype = "float64" })
        assert.are.equal("float64", b.dtype)
        assert.is_true(b:min():item() >= -3 and b:max():item() <= 2)
        assert.is_true(b:eq(b:floor()):all():item())
        raises("tide: randint_like: high (3) must be greater than low (3); high is excluded",
            function() return tide.randint_like(t, 3, 3) end)
        raises('tide: randint_like: unknown option "dtpe" (did you mean "dtype"?)',
            function() return tide.randint_like(t, 3, { dtpe = "int64" }) end)

        local rates = t64({ 0, 0.5, 4, 30, 1000 }):reshape(5, 1):expand(5, 400)
        local p = tide.poisson(rates)
        assert.are.same({ 5, 400 }, p.shape)
        assert.are.equal("float64", p.dtype)
        assert.is_true(p:eq(p:floor()):all():item() and p:min():item() >= 0)
        assert.are.equal(0, p:select(1, 1):max():item())
        local means = p:mean(2)
        for i, l in ipairs({ 0, 0.5, 4, 30, 1000 }) do
            assert.is_true(math.abs(means[i]:item() - l) < 0.2 * math.sqrt(l) + 0.05, "rate " .. l)
        end
        raises("tide: poisson: rates {2} has an element below 0, infinite or NaN; rates must " ..
            "be finite and >= 0", function() return tide.poisson(t64({ 1, -1 })) end)

        tide.manual_seed(42)
        assert.are.equal(42, tide.initial_seed())
        local s = tide.seed()
        assert.are.equal(s, tide.initial_seed())
        local x = tide.rand({ 4 }, { device = DEV })
        tide.manual_seed(s)
        assert.is_true(same(x, tide.rand({ 4 }, { device = DEV })))
    end)
end)

describe("the properties H, mH, nbytes and itemsize (" .. DEV .. ")", function()
    it("H and mH are the transposes (real dtypes), recorded as transpose", function()
        local a = t64({ 1, 2, 3, 4, 5, 6 }):reshape(2, 3):requires_grad_(true)
        assert.are.same({ { 1, 4 }, { 2, 5 }, { 3, 6 } }, vals(a.H))
        assert.are.same({ 3, 2 }, a.mH.shape)
        assert.are.same({ 2, 4, 3 }, t64({ 0 }):expand(2, 3, 4).mH.shape)
        assert.are.equal("TransposeBackward0", tostring(a.H.grad_fn))
        a.H:sum():backward()
        assert.are.same({ { 1, 1, 1 }, { 1, 1, 1 } }, vals(a.grad))
        raises("tide: H: tensor has 3 dims, expected 2 (H transposes a matrix, as PyTorch's); " ..
            "use mH for a batch of matrices", function() return t64({ 0 }):expand(2, 3, 4).H end)
        raises("tide: mH: tensor has 1 dim, expected at least 2 (mH swaps the last two); use T " ..
            "for a 1-d tensor", function() return t64({ 1, 2 }).mH end)
    end)

    it("nbytes and itemsize count the elements' bytes", function()
        local x = tide.zeros({ 2, 3 }, { dtype = "float32", device = DEV })
        assert.are.equal(24, x.nbytes)
        assert.are.equal(4, x.itemsize)
        assert.are.equal(8, ids({ 1 }).itemsize)
        assert.are.equal(16, ids({ 1, 2 }).nbytes)
        assert.are.equal(12, x:narrow(1, 1, 1).nbytes) -- a view: its own elements
    end)
end)
