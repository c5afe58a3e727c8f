-- opinfo_spec.lua — walks the op table (tide.core._ops): for every op, every dtype it accepts
-- and the device under test (spec/support/device.lua: cpu, cpu:1, the emulated cuda:0), it
-- runs the op on generated inputs (broadcast shapes, non-contiguous views, empty and 0-d
-- tensors, NaN/inf, integer extremes) and compares with the CPU float64 result, and with
-- PyTorch 1.13 through spec/fixtures/opinfo_torch.lua (spec/fixtures/make_opinfo.py);
-- differentiable ops get a finite-difference gradient check, the rows without a formula (the
-- table's not_differentiable flag) a check that they refuse an input that requires grad. A piece
-- missing for an op of the table fails here: its entry in spec/support/opinfo.lua, its PyTorch
-- fixture, its backward formula (or the table's no_grad or not_differentiable flag), its
-- mention in docs/API.md. docs/testing.md.
local tide = require("tide")
local core = require("tide.core")
local autograd = require("tide.autograd")
local D = require("spec.support.device")
local INFO = require("spec.support.opinfo")
local gradcheck = require("spec.support.gradcheck")
local TORCH = dofile("spec/fixtures/opinfo_torch.lua")

local OPS = core._ops
local DEV = D.name

-- ---- inputs ----------------------------------------------------------------------------------

local function is_float(dt)
    return dt == "float32" or dt == "float64" or dt == "float16" or dt == "bfloat16"
end

-- a small deterministic generator: the same inputs on every device and every run
local function rng(seed)
    local s = seed
    return function()
        s = (s * 1103515245 + 12345) % 2147483648
        return s / 2147483648
    end
end

local EXTREMES = {
    int32 = { -2147483648, 2147483647, -1 },
    int64 = { math.mininteger, math.maxinteger, -1 },
    uint8 = { 255, 128, 0 },
    bool = { true, false, true },
    float32 = { 0 / 0, 1 / 0, -1 / 0, -0.0 },
    float64 = { 0 / 0, 1 / 0, -1 / 0, -0.0 },
}
EXTREMES.float16 = EXTREMES.float64
EXTREMES.bfloat16 = EXTREMES.float64

-- every pair of these meets in the "pairs" case: a column of them against a row
local POOL = {
    int32 = { -2147483648, 2147483647, -1, 0, 1, 7, -7 },
    int64 = { math.mininteger, math.maxinteger, -1, 0, 1, 7, -7 },
    uint8 = { 0, 1, 7, 128, 255 },
    bool = { false, true },
    float64 = { 0 / 0, 1 / 0, -1 / 0, -0.0, 0.0, 1, -1, 2.5, -3.25 },
}
POOL.float32, POOL.float16, POOL.bfloat16 = POOL.float64, POOL.float64, POOL.float64

-- n values of dtype dt; special: NaN/inf (floats) or the extremes (integers) among them;
-- nonzero: no 0 (an integer divisor)
-- nonzero: no 0 (an integer divisor); nonneg: no negative (an integer exponent)
local function values(dt, n, seed, special, nonzero, nonneg)
    local r, v = rng(seed), {}
    for i = 1, n do
        local u = r()
        if dt == "bool" then
            v[i] = nonzero or u < 0.5
        elseif is_float(dt) then
            v[i] = math.floor((u * 6 - 3) * 16) / 16
        elseif dt == "uint8" then
            v[i] = math.floor(u * 19)
        else
            v[i] = math.floor(u * 19) - 9
        end
        if nonzero and v[i] == 0 then
            v[i] = 1
        end
        if nonneg and type(v[i]) == "number" and v[i] < 0 then
            v[i] = -v[i]
        end
    end
    if special then
        for i, x in ipairs(EXTREMES[dt]) do
            if i <= n and not (nonzero and (x == 0 or x == false)) and
                not (nonneg and type(x) == "number" and x < 0) then
                v[(i * 5) % n + 1] = x
            end
        end
    end
    return v
end

local function numel(shape)
    local n = 1
    for _, s in ipairs(shape) do
        n = n * s
    end
    return n
end

local function make(vals, shape, dt)
    if numel(shape) == 0 then
        return tide.zeros(shape, { dtype = dt, device = DEV })
    end
    return tide.tensor(vals, { dtype = dt, device = DEV }):reshape(shape)
end

-- an input of `shape` built with the given memory layout: contiguous, transposed (strides
-- swapped), narrowed (an offset and a row stride larger than the row) or expanded (stride 0)
local function input(spec, dt, seed, nonzero, nonneg)
    if type(spec) == "number" then
        return spec
    end
    local shape, layout = spec[1], spec.layout or "contiguous"
    if layout == "column" or layout == "row" then
        local v = {}
        for _, x in ipairs(POOL[dt]) do
            if not (nonzero and (x == 0 or x == false)) and
                not (nonneg and type(x) == "number" and x < 0) then
                v[#v + 1] = x
            end
        end
        return make(v, layout == "column" and { #v, 1 } or { 1, #v }, dt)
    end
    local rows, cols = shape[1], shape[2]
    if layout == "transposed" then
        local v = values(dt, rows * cols, seed, spec.special, nonzero, nonneg)
        return make(v, { cols, rows }, dt):t()
    elseif layout == "narrowed" then
        local v = values(dt, rows * (cols + 2), seed, spec.special, nonzero, nonneg)
        return make(v, { rows, cols + 2 }, dt):narrow(2, 2, cols)
    elseif layout == "expanded" then
        return make(values(dt, cols, seed, spec.special, nonzero, nonneg), { 1, cols }, dt)
            :expand(shape)
    end
    return make(values(dt, numel(shape), seed, spec.special, nonzero, nonneg), shape, dt)
end

-- the cases per family: each a list of input specs ({shape, layout =, special =} or a number)
-- and the extra arguments
local M34 = { 3, 4 }
local CASES = {
    unary = {
        { inputs = { { M34 } } },
        { inputs = { { M34, layout = "transposed" } } },
        { inputs = { { M34, layout = "narrowed", special = true } } },
        { inputs = { { M34, layout = "expanded" } } },
        { inputs = { { { 0, 4 } } } },
        { inputs = { { {} } } },
        { inputs = { { { 7 }, special = true } } },
    },
    binary = {
        { inputs = { { M34 }, { M34 } } },
        { inputs = { { { 3, 1 } }, { { 1, 4 } } } },
        { inputs = { { { 4 } }, { M34, special = true } } },
        { inputs = { { {} }, { M34 } } },
        { inputs = { { M34, layout = "transposed", special = true }, { M34, layout = "narrowed" } } },
        { inputs = { { M34, layout = "expanded" }, { M34, layout = "transposed", special = true } } },
        { inputs = { { { 0, 4 } }, { { 1, 4 } } } },
        { inputs = { { {}, layout = "column" }, { {}, layout = "row" } } },
        { inputs = { { M34, special = true }, 2 } },
        { inputs = { { M34 }, -1.5 } },
    },
    reduce = {},
}
CASES.compare = CASES.binary
CASES.predicate = CASES.unary
CASES.bounded = CASES.unary
for _, spec in ipairs({ { M34 }, { M34, layout = "transposed" },
    { M34, layout = "narrowed", special = true }, { { 5 }, special = true } }) do
    for _, extra in ipairs({ {}, { 1 }, { 2, true }, { -1 } }) do
        if #spec[1] > 1 or #extra == 0 or extra[1] == 1 or extra[1] == -1 then
            CASES.reduce[#CASES.reduce + 1] = { inputs = { spec }, extra = extra }
        end
    end
end
table.insert(CASES.reduce, { inputs = { { { 0, 4 } } }, extra = { 1 } })
table.insert(CASES.reduce, { inputs = { { { 0, 4 } } } })

-- ---- running and comparing -------------------------------------------------------------------

local function call(name, args, extra)
    local all = {}
    for _, a in ipairs(args) do
        all[#all + 1] = a
    end
    for _, a in ipairs(extra or {}) do
        all[#all + 1] = a
    end
    local a = all[1]
    return a[name](table.unpack(all))
end

local function map_args(args, f)
    local out = {}
    for i, a in ipairs(args) do
        out[i] = (type(a) == "number" or type(a) == "boolean") and a or f(a)
    end
    return out
end

local function describe_args(args)
    local s = {}
    for i, a in ipairs(args) do
        if type(a) ~= "userdata" then
            s[i] = tostring(a)
        else
            s[i] = string.format("%s[%s]%s", a.dtype, table.concat(a.shape, "x"),
                a:is_contiguous() and "" or " (strided)")
        end
    end
    return table.concat(s, ", ")
end

local function flat(t)
    return t:to("cpu"):contiguous():reshape(-1):totable()
end

local function same_shape(a, b)
    return table.concat(a, ",") == table.concat(b, ",")
end

local TOL = {
    float32 = { 1e-5, 1e-6 },
    float64 = { 1e-10, 1e-12 },
    float16 = { 2e-3, 1e-4 }, -- a few ulps: 2^-10 apart near 1
    bfloat16 = { 1.6e-2, 1e-3 }, -- 2^-7
}

local function close(x, y, rtol, atol)
    if x ~= x or y ~= y then
        return x ~= x and y ~= y
    end
    if x == y then
        return true
    end
    if x == math.huge or x == -math.huge or y == math.huge or y == -math.huge then
        return false
    end
    return math.abs(x - y) <= atol + rtol * math.abs(y)
end

local FITS = {
    bool = function(v) return v == 0 or v == 1 end,
    uint8 = function(v) return v >= 0 and v <= 255 end,
    int32 = function(v) return v >= -2 ^ 31 and v < 2 ^ 31 end,
    int64 = function(v) return v > -2 ^ 53 and v < 2 ^ 53 end, -- exact in float64
}

-- got (a tensor) against expected: float results within the dtype's tolerance, others exactly;
-- with `fits`, elements whose expected value the result dtype cannot hold are not compared
local function compare(got, expected, what, tol, fits, ignore)
    local g, e = flat(got), flat(expected)
    assert(#g == #e, what .. ": " .. #g .. " elements, expected " .. #e)
    local rtol, atol = table.unpack(tol and tol[got.dtype] or TOL[got.dtype] or { 0, 0 })
    for i = 1, #g do
        local x, y = g[i], e[i]
        if type(x) == "boolean" then
            x = x and 1 or 0
        end
        if type(y) == "boolean" then
            y = y and 1 or 0
        end
        if not (fits and not (y == math.floor(y) and fits(y))) and not close(x, y, rtol, atol) and
            not (ignore and ignore(x, y)) then
            error(string.format("%s: element %d is %s, expected %s", what, i, tostring(x),
                tostring(y)), 0)
        end
    end
end

-- runs one generated case on the device under test and checks it against the cpu: the same
-- dtype on contiguous cpu copies (dtype, shape, exact integers) and float64 (values)
local function check_case(name, entry, row, dt, case)
    local specs, extra = case.inputs, case.extra or entry.args
    local args = {}
    for i, spec in ipairs(specs) do
        local nonzero = i == 2 and (entry.nonzero or row.int_division) and not is_float(dt)
        local nonneg = i == 2 and row.int_power and not is_float(dt) -- PyTorch refuses those
        args[i] = input(spec, dt, 17 * i + #specs, nonzero, nonneg)
    end
    local what = string.format("%s(%s) on %s", name, describe_args(args), DEV)
    -- the cpu has no float16/bfloat16 kernels: its result in float32 stands for theirs
    local half = dt == "float16" or dt == "bfloat16"
    local host = map_args(args, function(a)
        return half and a:to("cpu"):float() or a:to("cpu"):contiguous()
    end)
    if row.integer_only and type(args[2]) == "number" and args[2] % 1 ~= 0 then
        local ok, err = pcall(call, name, args, extra) -- a bitwise op of a fraction
        assert(not ok, what .. ": expected an error")
        assert(tostring(err):find("tide: " .. name .. ": the number " .. args[2] ..
            " is not an integer", 1, true), what .. ": " .. tostring(err))
        return
    end
    if entry.empty_error and (args[1]:numel() == 0) then
        local ok, err = pcall(call, name, args, extra)
        assert(not ok, what .. ": expected an error")
        assert(tostring(err):find("tide: " .. name .. ": " .. entry.empty_error, 1, true),
            what .. ": " .. tostring(err))
        return
    end
    local got, got2 = call(name, args, extra)
    local want, want2 = call(name, host, extra)
    local want_dtype = (half and want.dtype == "float32") and dt or want.dtype
    -- the float64 reference sees the values the op sees: integers promoted to a float result
    -- dtype are rounded to it first (an int32 exponent in float32), and integer results are
    -- compared only where every integer input is exact in float64
    local exact = true
    local f64 = map_args(host, function(a)
        if is_float(want_dtype) and not is_float(a.dtype) then
            return a:to(want_dtype):double()
        end
        if a.dtype == "int64" and a:numel() > 0 then
            local m = a:abs():max():item()
            exact = exact and m ~= math.mininteger and m < 2 ^ 53
        end
        return a:double()
    end)
    -- the bitwise rows have no float64 to compare with: the cpu and PyTorch stand for it
    local ref, ref2
    if row.integer_only then
        exact = false
    else
        ref, ref2 = call(name, f64, extra)
    end
    assert(got.device == tide.device(DEV), what .. ": result on " .. tostring(got.device))
    assert(got.dtype == want_dtype, what .. ": dtype " .. got.dtype .. ", cpu gives " .. want_dtype)
    assert(same_shape(got.shape, want.shape), what .. ": shape {" .. table.concat(got.shape, ",") ..
        "}, cpu gives {" .. table.concat(want.shape, ",") .. "}")
    if is_float(got.dtype) then
        compare(got, ref:to(got.dtype), what .. " against float64", entry.tol)
    else
        compare(got, want, what .. " against cpu " .. dt)
        if exact then
            compare(got, ref, what .. " against float64", nil, FITS[got.dtype])
        end
    end
    if got2 then -- max/min over a dim: the indices
        compare(got2, want2, what .. " indices against cpu")
        if not is_float(dt) or not specs[1].special then -- ties and NaN: any index is right
            compare(got2, ref2, what .. " indices against float64")
        end
    end
end

-- a tensor of a fixture: {dtype =, shape =, values =}
local function fixture_tensor(t)
    if #t.values == 0 then
        return tide.zeros(t.shape, { dtype = t.dtype, device = DEV })
    end
    return tide.tensor(t.values, { dtype = t.dtype, device = DEV }):reshape(t.shape)
end

local function check_torch(name, entry, dt, fixture)
    for k, c in ipairs(fixture) do
        if not c.error then
            local args = map_args(c.args, fixture_tensor)
            local what = string.format("%s(%s) on %s against PyTorch (case %d)", name,
                describe_args(args), DEV, k)
            local got, got2 = call(name, args)
            for j, pair in ipairs({ { got, c.out }, { got2, c.out2 } }) do
                local g, o = pair[1], pair[2]
                if o then
                    local w = what .. (j == 2 and " indices" or "")
                    assert(g.dtype == o.dtype, w .. ": dtype " .. g.dtype .. ", PyTorch's " .. o.dtype)
                    assert(same_shape(g.shape, o.shape), w .. ": shape {" ..
                        table.concat(g.shape, ",") .. "}, PyTorch's {" .. table.concat(o.shape, ",") .. "}")
                    compare(g, tide.tensor(o.values, { dtype = o.dtype }), w, entry.tol, nil,
                        entry.torch_differs and entry.torch_differs.values)
                end
            end
        end
    end
end

-- float64 inputs for the gradient check, in the entry's domain and away from its kinks
local function grad_input(entry, i, shape, seed)
    local dom = entry.grad.domain or { -2, 2 }
    if type(dom[1]) == "table" then
        dom = dom[i]
    end
    local r, n, v = rng(seed), numel(shape), {}
    for k = 1, n do
        local x
        repeat
            x = dom[1] + (dom[2] - dom[1]) * r()
            local near = false
            for _, a in ipairs(entry.grad.avoid or {}) do
                near = near or math.abs(x - a) < 0.05
            end
        until not near
        v[k] = x
    end
    local t = tide.tensor(v, { dtype = "float64", device = DEV }):reshape(shape):clone()
    for _, c in ipairs(entry.grad.constant or {}) do
        if c == i then
            return t -- an input the op has no gradient for
        end
    end
    return t:requires_grad_(true)
end

local GRAD_CASES = {
    unary = { { { 2, 3 } } },
    binary = { { { 2, 3 }, { 2, 3 } }, { { 2, 3 }, { 1, 3 } }, { { 3 }, { 2, 1 } } },
    compare = { { { 2, 3 }, { 1, 3 } } },
    predicate = { { { 2, 3 } } },
    bounded = { { { 2, 3 } } },
    reduce = { { { 2, 3 } }, { { 2, 3 }, dims = { 1 } }, { { 2, 3 }, dims = { 2, true } } },
}

-- ---- the walk --------------------------------------------------------------------------------

-- the words docs/API.md shows in code spans
local API_WORDS = {}
do
    local f = assert(io.open("docs/API.md"))
    local text = f:read("*a")
    f:close()
    for span in text:gmatch("`([^`]+)`") do
        for w in span:gmatch("[%a_][%w_]*") do
            API_WORDS[w] = true
        end
    end
end

describe("the op table (" .. DEV .. ")", function()
    it("is exposed as tide.core._ops, one row per op", function()
        assert.is_table(OPS, "tide.core._ops is missing")
        assert.is_true(#OPS > 0)
        for _, row in ipairs(OPS) do
            assert.is_string(row.name)
            assert.is_string(row.family)
        end
    end)
end)

for _, row in ipairs(OPS or {}) do
    local name, fam = row.name, row.family
    local entry = INFO.ops[name]
    describe("op " .. name .. " (" .. fam .. ", " .. DEV .. ")", function()
        it("has an entry in spec/support/opinfo.lua", function()
            assert(entry, "op '" .. name .. "' of the op table has no entry in " ..
                "spec/support/opinfo.lua (its dtypes, gradient domain, ...): add one")
        end)
        it("has a backward formula, or the no_grad or not_differentiable flag", function()
            local without = row.no_grad or row.not_differentiable
            assert(without or autograd.has_formula(name), "op '" .. name .. "' has no " ..
                "backward formula in tide.autograd and no no_grad or not_differentiable flag " ..
                "in include/tide_ops.def")
            assert(without or (entry and entry.grad), "op '" .. name .. "' is " ..
                "differentiable but its entry in spec/support/opinfo.lua has no grad check")
            assert(not (row.not_differentiable and autograd.has_formula(name)), "op '" .. name ..
                "' has a backward formula and the not_differentiable flag: drop the flag")
        end)
        it("is named in docs/API.md", function()
            assert(API_WORDS[name], "op '" .. name .. "' is not named in docs/API.md: " ..
                "document it")
        end)
        it("has PyTorch fixtures", function()
            assert(TORCH[name], "op '" .. name .. "' has no PyTorch fixture in " ..
                "spec/fixtures/opinfo_torch.lua: add it to spec/fixtures/make_opinfo.py and " ..
                "run /usr/bin/python3 spec/fixtures/make_opinfo.py")
        end)
        if not entry then
            return
        end
        local cases = CASES[fam]
        local dtypes = (entry.dtypes or INFO.device_dtypes)[D.kind]
        for _, dt in ipairs(dtypes) do
            if cases then
                it("matches the cpu float64 result on " .. dt, function()
                    for _, case in ipairs(cases) do
                        check_case(name, entry, row, dt, case)
                    end
                end)
            end
            local fixture = TORCH[name] and TORCH[name][dt]
            local skip = entry.torch_skip and entry.torch_skip[dt]
            if fixture and not skip then
                -- int64 fixtures hold +-2^63: a Lua without integers cannot write them
                it("matches PyTorch 1.13 on " .. dt .. (dt == "int64" and " #lua53" or ""), function()
                    check_torch(name, entry, dt, fixture)
                end)
            end
        end
        it("refuses the dtypes it does not accept, naming itself", function()
            local accepted = {}
            for _, dt in ipairs(dtypes) do
                accepted[dt] = true
            end
            for _, dt in ipairs(INFO.all_dtypes) do
                if not accepted[dt] then
                    local specs = (cases or CASES.unary)[1].inputs
                    local args = map_args(specs, function(s)
                        return tide.ones(s[1], { dtype = dt, device = DEV })
                    end)
                    local ok, err = pcall(call, name, args, entry.args)
                    assert(not ok, name .. " on " .. dt .. ": expected an error")
                    assert(tostring(err):find("tide: " .. name .. ":", 1, true), tostring(err))
                end
            end
        end)
        if entry.grad and not row.no_grad then
            it("has a gradient that matches finite differences (float64)", function()
                for k, gc in ipairs(GRAD_CASES[fam] or GRAD_CASES.unary) do
                    local inputs = {}
                    for i, shape in ipairs(gc) do
                        inputs[i] = grad_input(entry, i, shape, 31 * k + i)
                    end
                    local extra = gc.dims or entry.args
                    local ok, err = pcall(gradcheck, function(...)
                        return call(name, { ... }, extra)
                    end, inputs)
                    assert(ok, name .. " case " .. k .. " on " .. DEV .. ": " .. tostring(err))
                end
            end)
        elseif row.not_differentiable then
            it("raises 'not differentiable' for an input that requires grad", function()
                local specs = (GRAD_CASES[fam] or GRAD_CASES.unary)[1]
                for i = 1, #specs do
                    local inputs = {}
                    for j, shape in ipairs(specs) do
                        inputs[j] = grad_input({ grad = { constant = j ~= i and { j } or {} } },
                            j, shape, 7 + j)
                    end
                    local msg = "tide: " .. name .. ": not differentiable: argument #" .. i
                    local ok, err = pcall(call, name, inputs, entry.args)
                    assert(not ok and tostring(err):find(msg, 1, true), tostring(err))
                    if row.inplace then -- into a copy that needs no grad, from one that does
                        local dst = map_args(inputs, function(a) return a:detach():clone() end)
                        dst[i] = inputs[i]
                        ok, err = pcall(call, name .. "_", dst, entry.args)
                        assert(not ok and tostring(err):find("tide: " .. name .. "_: not " ..
                            "differentiable: argument #" .. i, 1, true), tostring(err))
                    end
                    tide.no_grad(function() -- computed, not recorded, without grad mode
                        assert.is_false(call(name, inputs, entry.args).requires_grad)
                    end)
                end
            end)
        elseif row.no_grad and not row.integer_only then -- (integer inputs never need grad)
            it("gives a result that does not require grad", function()
                local specs = (GRAD_CASES[fam] or GRAD_CASES.unary)[1]
                local inputs = {}
                for i, shape in ipairs(specs) do
                    inputs[i] = grad_input({ grad = {} }, i, shape, 7 + i)
                end
                local out = call(name, inputs, entry.args)
                assert.is_false(out.requires_grad)
            end)
        end
    end)
end
