-- kernel_rows_spec.lua — every row of include/tide_kernels.def, walked from tide.core._kernels
-- on the device under test (spec/support/device.lua): the generic binding exists and makes its
-- outputs in their shape classes, and the one dispatch's rules hold for each row by itself
-- (dtype, device, d, the shape of each further input, parameters out of their range or NaN, no
-- rows, inout inputs written in place and only when contiguous). A new row is checked here
-- without a line of its own. A row with ALONG outputs (sort's selections: topk, kthvalue) runs
-- along the last dim here (inner = 1, its second parameter), k = 2 (its third). A MATRIX row
-- (tide.linalg's) gets a batch of 3 matrices, m = n = 2, symmetric positive-definite ones where
-- square (every solver runs on them), pivots that swap nothing and 3 right-hand sides.
local tide = require("tide")
local core = require("tide.core")
local K = core._internal
local D = require("spec.support.device")
local compat = require("tide._compat")
local pack, unpack = compat.pack, compat.unpack

local dev = D.name
local ROWS, D_, N_ = 4, 4, 2
-- channels: a row with a CHANNELS tensor has inner = 2 (its second parameter), so d = 4 makes
-- C = 2 channels
local SHAPE = { rows = { ROWS, D_ }, stats = { ROWS }, cols = { D_ }, nmat = { N_, D_ },
    ncols = { N_ }, nrows = { ROWS, N_ }, channels = { D_ / 2 },
    -- WINDOW rows: images [2, 2, 3, 3] under a 2x2 window of stride 1 (WINDOW_PARAMS), so 2x2
    -- windows a plane and columns of 2 * 2 * 2 taps
    image = { 2, 2, 3, 3 }, pooled = { 2, 2, 2, 2 }, columns = { 2, 8, 4 } }
-- a WINDOW row's parameters by name: the window, its flag off, and the image's C, H, W
local WINDOW_PARAMS = { kh = 2, kw = 2, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1,
    ceil_mode = 0, folded = 0, C = 2, H = 3, W = 3 }
-- a MATRIX tensor's extents (an integer parameter's: 2, its value in the calls below)
local EXTENT = { m = 2, n = 2, k = 2, rhs = 3 }
local BATCH = 3

-- a MATRIX tensor's shape from its extents ("n, n"; info's none): the batch, then each
local function matrix_shape(dims, batch)
    local shape = { batch or BATCH }
    for e in (dims or ""):gmatch("[^, ]+") do
        shape[#shape + 1] = tonumber(e) or EXTENT[e] or 2
    end
    return shape
end

-- whether row r has a wide tensor (T_WIDE: a recurrent cell's gates, width * d values a row)
local function is_wide(r)
    for _, side in ipairs({ "inputs", "outputs" }) do
        for i, w in ipairs(r[side .. "_width"]) do
            if w ~= 1 and r[side .. "_shape"][i] == "rows" then
                return true
            end
        end
    end
    return false
end

-- the shape of a tensor of class cls and width w in the calls below (rows: w * d values a row;
-- along: w, or k = 2 for w = 0, at the last dim)
local function shape_of(cls, w, dims)
    if cls == "along" then
        return { ROWS, w == 0 and 2 or w }
    elseif cls == "matrix" or cls == "info" then
        return matrix_shape(dims)
    end
    return cls == "rows" and { ROWS, (w or 1) * D_ } or SHAPE[cls]
end

-- whether row r has ALONG outputs: it runs along a dim (inner, its second parameter, is 1 here)
local function is_along(r)
    for _, cls in ipairs(r.outputs_shape) do
        if cls == "along" then
            return true
        end
    end
    return false
end

local function names()
    local list = {}
    for name in pairs(core._kernels) do
        list[#list + 1] = name
    end
    table.sort(list)
    return list
end

-- a call of row r: every input (optional ones too) in its shape class (offsets: input 1's 4
-- tokens as two sequences of 2), then the parameters (d first: 4, or 2 for a PACKED row, whose
-- heads = 2 make input 1's 4 features; then n = 2 for a PROJ row; the float ones at 0.5, the
-- other integers 2, or their largest value below it), then true for every optional output
local function call_args(r, opts)
    opts = opts or {}
    local args, n = {}, 0
    for i, cls in ipairs(r.inputs_shape) do
        local shape = (opts.shape and opts.shape[i]) or
            shape_of(cls, r.inputs_width[i], r.inputs_dims[i])
        local device = (opts.device and opts.device[i]) or dev
        n = n + 1
        if cls == "matrix" then -- pivots 1..n: no swap; square ones a a^T + 2 I
            local t = tide.randn(shape, { dtype = "float64" })
            if r.inputs_index[i] then
                t = tide.arange(1, shape[#shape] + 1):expand(shape)
            elseif #shape == 3 and shape[2] == shape[3] then
                t = t:matmul(t:transpose(-2, -1)) + tide.eye(shape[2], { dtype = "float64" }) * 2
            end
            args[n] = t:to((opts.dtype and opts.dtype[i]) or (r.inputs_index[i] and "int64" or
                r.dtypes[1])):to(device)
        elseif cls == "offsets" then
            local tokens = (opts.shape and opts.shape[1] and opts.shape[1][1]) or ROWS
            args[n] = tide.tensor(shape and { 0, 0 } or { 0, math.floor(tokens / 2), tokens },
                { dtype = (opts.dtype and opts.dtype[i]) or "int64", device = device })
        elseif r.inputs_index[i] then -- int64 positions (some outside the plane: none added)
            args[n] = tide.randint(-1, 9, shape, { device = device })
            args[n] = opts.dtype and opts.dtype[i] and args[n]:to(opts.dtype[i]) or args[n]
        else
            local t = tide.randn(shape, { device = device, dtype = "float64" })
            t = cls == "stats" and t:abs():add(0.5) or t -- rstd-like statistics stay positive
            args[n] = t:to((opts.dtype and opts.dtype[i]) or r.dtypes[1])
        end
    end
    local has_d = r.kind ~= "elementwise" and r.kind ~= "window" and r.kind ~= "matrix"
    for i, ty in ipairs(r.params_type) do
        n = n + 1
        args[n] = (opts.params and opts.params[i])
            or (r.kind == "window" and WINDOW_PARAMS[r.params[i]])
            or (has_d and i == 1 and (r.kind == "packed" and math.floor(D_ / 2) or D_))
            or (i == 2 and is_along(r) and 1)
            or (ty == "float" and 0.5 or math.min(2, r.params_max[i] or 2))
    end
    for _, opt in ipairs(r.outputs_optional) do
        if opt then
            n = n + 1
            args[n] = true
        end
    end
    return args, n
end

-- whether the device under test has row r's kernel (the CPU has every row; a device without
-- one answers nil, its callers run their composite; a row that writes in place and has one
-- returns nothing)
local function has_row(r)
    local args, n = call_args(r)
    local res = pack(pcall(K[r.name], unpack(args, 1, n)))
    assert.is_true(res[1], r.name .. ": " .. tostring(res[2]))
    local has = #r.outputs == 0 and res.n == 1 or res[2] ~= nil
    assert.is_true(has or D.kind ~= "cpu", r.name .. " has no kernel on " .. dev)
    return has
end

local function err_of(r, opts)
    local args, n = call_args(r, opts)
    local ok, err = pcall(K[r.name], unpack(args, 1, n))
    assert.is_false(ok, r.name .. " should have raised")
    return err
end

-- rows whose kernel on a device lacks a dtype the row lists: the binding answers nil there (the
-- caller's own error or composite), checked below as it is
local NO_DTYPE = {
    cuda = { rnn_step = true, rnn_step_backward = true, lstm_step = true,
        lstm_step_backward = true, gru_step = true, gru_step_backward = true,
        why = "the recurrent cells' CUDA kernels (src/cuda/rnn.cu) are float32 and float64 " ..
            "only, as the rnn_cell entry was: nn's RNNs raise for float16 and bfloat16 there" },
}
local function lacks(name, dtype)
    local gap = NO_DTYPE[D.kind]
    return gap and gap[name] and (dtype == "float16" or dtype == "bfloat16")
end

describe("kernel rows on " .. dev, function()
    it("lists each row with its binding, and makes the outputs in their shape classes", function()
        assert.is_true(#names() >= 4)
        for _, name in ipairs(names()) do
            local r = core._kernels[name]
            assert.are.equal(name, r.name)
            assert.are.equal("function", type(K[name]), name)
            if r.kind == "window" then -- sized from input 1 and the window, no d
                local c1 = r.inputs_shape[1]
                assert.is_true(c1 == "image" or c1 == "pooled" or c1 == "columns", name)
                assert.are.equal(c1 == "pooled" and "H" or "kh", r.params[1], name)
            elseif r.kind == "matrix" then -- torch.linalg's op, sized from input 1, no d
                assert.are.equal("matrix", r.inputs_shape[1], name)
                assert.are.equal("linalg.", name:sub(1, 7))
            else
                assert.are.equal("rows", r.inputs_shape[1], name)
                assert.is_true(r.kind == "elementwise" or r.params[1] == "d", name)
            end
            if r.kind == "elementwise" then -- every tensor in input 1's shape
                for i, cls in ipairs(r.inputs_shape) do
                    assert.are.equal("rows", cls, name .. " " .. r.inputs[i])
                end
            elseif r.kind == "proj" then
                assert.are.equal("n", r.params[2], name)
            elseif r.kind == "packed" then
                assert.are.equal("heads", r.params[2], name)
            elseif r.kind ~= "window" and r.kind ~= "matrix" then
                assert.are.equal("rows", r.kind, name)
            end
            for _, dtype in ipairs(has_row(r) and r.dtypes or {}) do
                local dts = {}
                for i, cls in ipairs(r.inputs_shape) do
                    dts[i] = (cls == "offsets" or r.inputs_index[i]) and "int64" or dtype
                end
                local args, n = call_args(r, { dtype = dts })
                local outs = pack(K[name](unpack(args, 1, n)))
                if lacks(name, dtype) then -- NO_DTYPE
                    assert.is_nil(outs[1], name .. " " .. dtype)
                    outs = nil
                end
                for i, cls in ipairs(outs and r.outputs_shape or {}) do
                    local o = outs[i]
                    assert.is_not_nil(o, name .. " output " .. r.outputs[i])
                    assert.are.same(shape_of(cls, r.outputs_width[i], r.outputs_dims[i]), o.shape,
                        name .. " " .. r.outputs[i])
                    assert.are.equal(r.outputs_index[i] and "int64" or
                        cls == "info" and "int32" or dtype, o.dtype)
                    assert.are.equal(dev, tostring(o.device))
                end
            end
        end
    end)

    it("leaves out the optional outputs not asked for, and accepts absent optional inputs", function()
        for _, name in ipairs(names()) do
            local r = core._kernels[name]
            local args, n = call_args(r)
            if has_row(r) then -- (no goto: the specs run on Lua 5.1 too)
                local k = n
                for i = #r.outputs, 1, -1 do
                    if r.outputs_optional[i] then
                        args[k] = false
                        k = k - 1
                    end
                end
                for i, opt in ipairs(r.inputs_optional) do
                    if opt then
                        args[i] = nil
                    end
                end
                local outs = pack(K[name](unpack(args, 1, n)))
                for i, opt in ipairs(r.outputs_optional) do
                    if opt then
                        assert.is_nil(outs[i], name .. " " .. r.outputs[i])
                    else
                        assert.is_not_nil(outs[i], name .. " " .. r.outputs[i])
                    end
                end
            end
        end
    end)

    it("gives the one dispatch's errors for every row", function()
        for _, name in ipairs(names()) do
            local r = core._kernels[name]
            local x = r.inputs[1]
            local bytes, takes = {}, {} -- uint8: no row takes it but sort's (every dtype)
            for i = 1, #r.inputs do
                bytes[i] = "uint8"
            end
            for _, dt in ipairs(r.dtypes) do
                takes[dt] = true
            end
            if not takes.uint8 then
                assert.matches("tide: " .. name .. ": " .. x .. " must be " ..
                    table.concat(r.dtypes, " or ") .. ", got uint8", err_of(r, { dtype = bytes }),
                    1, true)
            end
            if r.kind == "proj" then -- the last dim is d
                assert.matches("tide: " .. name .. ": " .. x .. " of shape [4, 4] must have d = 5 " ..
                    "elements in its last dim", err_of(r, { params = { 5 } }), 1, true)
                assert.matches("tide: " .. name .. ": " .. x .. " of shape [12] must have d = 4 " ..
                    "elements in its last dim", err_of(r, { shape = { { 12 } } }), 1, true)
            elseif r.kind == "packed" then -- [N, heads * d], and nothing else
                for _, bad in ipairs({ { { 4, 4 }, { 3 } }, { { 4, 6 }, nil }, { { 2, 2, 4 }, nil },
                    { { 4, 4 }, { 2, 4 } } }) do
                    local ps = bad[2] or {}
                    assert.matches(string.format("tide: %s: %s of shape %s must be [N, heads * d] " ..
                        "with heads = %d and d = %d", name, x,
                        "[" .. table.concat(bad[1], ", ") .. "]", ps[2] or 2, ps[1] or 2),
                        err_of(r, { shape = { bad[1] }, params = bad[2] }), 1, true)
                end
            elseif r.kind == "rows" and is_wide(r) then -- the last dim is width * d
                local w = r.inputs_width[1]
                assert.matches(("tide: %s: %s of shape [4, %d] must have %d * d = %d elements in " ..
                    "its last dim"):format(name, x, 4 * w, w, 3 * w), err_of(r, { params = { 3 } }),
                    1, true)
            elseif r.kind == "rows" then
                assert.matches("tide: " .. name .. ": " .. x .. " of shape [4, 4] does not split " ..
                    "into rows of d = 3 elements", err_of(r, { params = { 3 } }), 1, true)
            elseif r.kind == "matrix" then -- [..., m, n], square where its extents say n, n
                local dims = r.inputs_dims[1]
                assert.matches("tide: " .. name .. ": " .. x .. " of shape [7] must be a matrix " ..
                    "or a batch of matrices [..., " .. dims .. "]", err_of(r, { shape = { { 7 } } }),
                    1, true)
                if dims == "n, n" then
                    assert.matches("tide: " .. name .. ": " .. x .. " of shape [3, 2, 3] must be " ..
                        "[..., n, n]", err_of(r, { shape = { { 3, 2, 3 } } }), 1, true)
                end
            end
            if r.kind ~= "elementwise" and r.kind ~= "window" and r.kind ~= "matrix" then
                assert.matches("tide: " .. name .. ": d = 0 must be >= 1",
                    err_of(r, { params = { 0 } }), 1, true)
            end
            for i = 2, #r.inputs do
                local what = r.inputs[i]
                local devs, shapes, dts = {}, {}, {}
                devs[i], shapes[i] = D.other, { 7 }
                assert.matches("same device", err_of(r, { device = devs }), 1, true)
                if r.inputs_shape[i] == "offsets" then -- int64, 1-D, not empty
                    dts[i] = "int32"
                    assert.matches("tide: " .. name .. ": " .. what .. " must be a 1-D int64 " ..
                        "tensor of offsets, got int32 [3]", err_of(r, { dtype = dts }), 1, true)
                else
                    assert.matches("tide: " .. name .. ": " .. what .. " of shape [7]",
                        err_of(r, { shape = shapes }), 1, true)
                    dts[1], dts[i] = "float32", "float64"
                    assert.matches("tide: " .. name .. ": " .. what .. (r.inputs_index[i] and
                        " must be an int64 tensor of indices, got float64" or
                        " must have " .. x .. "'s dtype float32, got float64"),
                        err_of(r, { dtype = dts }), 1, true)
                end
            end
            for i, ty in ipairs(r.params_type) do
                local max = r.params_max[i]
                if max then -- the other parameters at their defaults (call_args)
                    local ps = {}
                    ps[i] = max + 1
                    assert.matches(string.format("tide: %s: %s = %d must be in ", name, r.params[i],
                        max + 1), err_of(r, { params = ps }), 1, true)
                end
                local min = r.params_min[i]
                if ty == "float" and min and min > -1 then
                    local ps = {}
                    ps[i] = -1
                    assert.matches("tide: " .. name .. ": " .. r.params[i] .. " = -1 must be " ..
                        (max and "in " or (">= %g"):format(min)), err_of(r, { params = ps }), 1, true)
                end
                if ty == "float" then
                    local ps = {}
                    ps[i] = 0 / 0
                    assert.matches("tide: " .. name .. ": " .. r.params[i] .. " is NaN; give a " ..
                        "number", err_of(r, { params = ps }), 1, true)
                end
            end
        end
    end)

    it("writes inout inputs in place, marked written, and refuses them not contiguous", function()
        for _, name in ipairs(names()) do
            local r = core._kernels[name]
            for i, inout in ipairs(has_row(r) and r.inputs_inout or {}) do
                if inout then
                    local args, n = call_args(r)
                    local t, v0 = args[i], args[i]:_version()
                    local before = t:clone()
                    K[name](unpack(args, 1, n))
                    assert.is_true(t:_version() > v0, name .. " " .. r.inputs[i])
                    assert.is_true(t:ne(before):any():item(), name .. " " .. r.inputs[i])
                    -- a transposed view: refused before any tensor is written
                    args = call_args(r)
                    local copies = {}
                    for j = 1, #r.inputs do
                        copies[j] = args[j]:clone()
                    end
                    args[i] = args[i]:t():contiguous():t()
                    local ok, err = pcall(K[name], unpack(args, 1, n))
                    assert.is_false(ok, name)
                    assert.is_truthy(err:find("tide: " .. name .. ": " .. r.inputs[i] .. " is " ..
                        "written in place and must be contiguous", 1, true), err)
                    for j = 1, #r.inputs do
                        assert.is_true(args[j]:eq(copies[j]):all():item(), name .. " " .. j)
                    end
                end
            end
        end
    end)

    it("runs no kernel on no rows: empty outputs, sums over the rows 0", function()
        for _, name in ipairs(names()) do
            local r = core._kernels[name]
            local shapes = {}
            for i, cls in ipairs(r.inputs_shape) do
                shapes[i] = cls == "rows" and { 0, r.inputs_width[i] * D_ } or
                    cls == "nrows" and { 0, N_ } or cls == "stats" and { 0 } or nil
                if r.kind == "window" then -- no images: N = 0
                    shapes[i] = { unpack(SHAPE[cls]) }
                    shapes[i][1] = 0
                elseif r.kind == "matrix" then -- no matrices: a batch of 0
                    shapes[i] = matrix_shape(r.inputs_dims[i], 0)
                end
            end
            local args, n = call_args(r, { shape = shapes })
            local outs = pack(K[name](unpack(args, 1, n)))
            for i, cls in ipairs(has_row(r) and r.outputs_shape or {}) do
                local o = outs[i]
                if cls == "cols" or cls == "channels" then -- sums over no rows
                    assert.are.same(SHAPE[cls], o.shape)
                    assert.are.equal(0, o:abs():sum():item())
                else
                    assert.are.equal(0, o:numel(), name .. " " .. r.outputs[i])
                end
            end
        end
    end)
end)

-- the row cumsum on the device under test: x:cumsum(dim) gives the host's values in every dtype
-- and dim (the kernel on the CPU and CUDA, float32 in a double accumulator on both), and its
-- gradient is g's running sum from the end
describe("cumsum on " .. dev, function()
    it("matches the host's values for each dtype and dim, long rows included", function()
        for _, dt in ipairs({ "float32", "float64", "int32", "int64", "uint8", "bool" }) do
            for _, s in ipairs({ { 7 }, { 3, 5 }, { 2, 0, 3 }, { 4, 1, 6 }, { 2, 3, 4, 5 },
                { 3000 }, { 3, 1100 } }) do
                local n = 1
                for _, v in ipairs(s) do
                    n = n * v
                end
                local x = tide.arange(n):remainder(7):sub(3):to(dt):view(s)
                for d = 1, #s do
                    local want = x:cumsum(d)
                    local got = x:to(dev):cumsum(d)
                    assert.are.equal(dev, tostring(got.device))
                    assert.are.equal(want.dtype, got.dtype)
                    assert.are.same(want:size(), got:size())
                    assert.is_true(want:equal(got:cpu()), dt .. " dim " .. d)
                end
            end
        end
        -- a row long enough for the CPU's two-pass blocks (4 * 2^14 elements and more): the
        -- same sums as the integers'
        local long = tide.arange(70000):remainder(7):sub(3)
        assert.is_true(long:float():to(dev):cumsum(1):cpu():long():equal(long:cumsum(1)))
        -- PyTorch's x.cumsum(0) of uniform float32 draws: every prefix within 6e-8 of float64's
        tide.manual_seed(0)
        local u = tide.rand(20000)
        local ref = u:double():cumsum(1)
        local got = u:to(dev):cumsum(1):cpu():double()
        assert.is_true(got:sub(ref):abs():div(ref):max():item() < 6e-8)
        local r = tide.ones(2, 4, { dtype = "float64", device = dev, requires_grad = true })
        r:cumsum(2):sum():backward()
        assert.are.same({ { 4, 3, 2, 1 }, { 4, 3, 2, 1 } }, r.grad:cpu():totable())
    end)
end)
