-- cnn_kernels_spec.lua — the CNN fast paths (issue 15): the 2x2 stride-2 max pool, stride-1
-- im2col/col2im runs, the batch-folded columns of conv2d's one-gemm path and relu's one-pass
-- gradient, each against a plain Lua reference; tagged #cuda: the same kernels on cuda:0 give
-- the CPU's results.
local tide = require("tide")
local host = require("spec.support.host")
local core = require("tide.core")
local K = core._internal -- the internal kernels (tide._internal in docs/API.md)

local NAN = 0 / 0

-- Lua reference of max pooling over one [H, W] plane given as a table of rows
local function ref_pool(x, k, s, p)
    local H, W = #x, #x[1]
    local OH, OW = host.idiv(H + 2 * p - k, s) + 1, host.idiv(W + 2 * p - k, s) + 1
    local out, idx = {}, {}
    for oh = 1, OH do
        out[oh], idx[oh] = {}, {}
        for ow = 1, OW do
            local best, bi
            for i = 0, k - 1 do
                for j = 0, k - 1 do
                    local h, w = (oh - 1) * s - p + i + 1, (ow - 1) * s - p + j + 1
                    if h >= 1 and h <= H and w >= 1 and w <= W then
                        local v = x[h][w]
                        if bi == nil or v > best or (v ~= v and best == best) then
                            best, bi = v, (h - 1) * W + (w - 1)
                        end
                    end
                end
            end
            out[oh][ow], idx[oh][ow] = best, bi
        end
    end
    return out, idx
end

local function same_values(got, want, what)
    for i = 1, #want do
        for j = 1, #want[i] do
            local g, w = got[i][j], want[i][j]
            if not (g == w or (g ~= g and w ~= w)) then
                error(string.format("%s: [%d][%d] got %s, expected %s", what, i, j, g, w), 2)
            end
        end
    end
end

local function max_diff(a, b)
    return (a:cpu():double() - b:cpu():double()):abs():max():item()
end

describe("CNN kernels", function()
    it("2x2 max pooling: values, first maximum on ties, NaN wins, odd sizes drop the edge", function()
        local x = {
            { 1, 3, 3, 0, 9 },
            { 2, 3, NAN, 1, 9 },
            { -1, -1, 5, 5, 9 },
            { -1, -2, 5, 6, 9 },
            { 7, 7, 7, 7, 7 },
        }
        for _, dtype in ipairs({ "float32", "float64" }) do
            local t = tide.tensor({ { x } }, { dtype = dtype })
            local y, ix = K.maxpool2d(t, 2, 2, 2, 2, 0, 0)
            local ry, ri = ref_pool(x, 2, 2, 0)
            assert.are.same({ 1, 1, 2, 2 }, y.shape)
            same_values(y[1][1]:totable(), ry, dtype .. " values")
            same_values(ix[1][1]:totable(), ri, dtype .. " indices")
            assert.are.same({ { 1, 7 }, { 10, 18 } }, ix[1][1]:totable())
            -- backward: each gradient lands on its window's maximum, zero elsewhere
            local g = K.maxpool2d_backward(tide.tensor({ { { { 1, 2 }, { 3, 4 } } } },
                { dtype = dtype }), ix, 5, 5)
            local want = {
                { 0, 1, 0, 0, 0 }, { 0, 0, 2, 0, 0 }, { 3, 0, 0, 0, 0 }, { 0, 0, 0, 4, 0 },
                { 0, 0, 0, 0, 0 },
            }
            assert.are.same(want, g[1][1]:totable())
        end
    end)

    it("max pooling that is not 2x2/2 still takes the general path", function()
        tide.manual_seed(3)
        local t = tide.randn(2, 3, 7, 6, { dtype = "float64" })
        for _, geom in ipairs({ { 3, 1, 1 }, { 2, 1, 0 }, { 3, 2, 1 }, { 2, 2, 1 } }) do
            local k, s, p = geom[1], geom[2], geom[3]
            local y, ix = K.maxpool2d(t, k, k, s, s, p, p)
            local ry, ri = ref_pool(t[2][3]:totable(), k, s, p)
            same_values(y[2][3]:totable(), ry, "values k" .. k .. " s" .. s .. " p" .. p)
            same_values(ix[2][3]:totable(), ri, "indices k" .. k .. " s" .. s .. " p" .. p)
        end
    end)

    it("stride-1 im2col with padding reads zeros outside, col2im is its adjoint", function()
        tide.manual_seed(5)
        for _, geom in ipairs({ { 3, 3, 1, 1, 1, 1 }, { 3, 2, 1, 1, 0, 1 }, { 5, 5, 1, 1, 2, 2 },
            { 2, 3, 1, 2, 1, 0 }, { 5, 3, 1, 1, 2, 1 } }) do
            local kh, kw, sh, sw, ph, pw = table.unpack(geom)
            local x = tide.randn(2, 3, 4, 5, { dtype = "float64" })
            local cols = K.im2col(x, kh, kw, sh, sw, ph, pw)
            local OH, OW = host.idiv(4 + 2 * ph - kh, sh) + 1, host.idiv(5 + 2 * pw - kw, sw) + 1
            assert.are.same({ 2, 3 * kh * kw, OH * OW }, cols.shape)
            local xs = x:totable()
            for _, n in ipairs({ 1, 2 }) do
                for c = 1, 3 do
                    for i = 0, kh - 1 do
                        for j = 0, kw - 1 do
                            local row = ((c - 1) * kh + i) * kw + j + 1
                            for oh = 0, OH - 1 do
                                for ow = 0, OW - 1 do
                                    local h, w = oh * sh - ph + i + 1, ow * sw - pw + j + 1
                                    local want = (h >= 1 and h <= 4 and w >= 1 and w <= 5)
                                        and xs[n][c][h][w] or 0
                                    local got = cols[n][row][oh * OW + ow + 1]:item()
                                    assert.are.equal(want, got)
                                end
                            end
                        end
                    end
                end
            end
            -- <im2col(x), c> == <x, col2im(c)>
            local c = tide.randn(cols.shape, { dtype = "float64" })
            local back = K.col2im(c, 3, 4, 5, kh, kw, sh, sw, ph, pw)
            local lhs, rhs = cols:mul(c):sum():item(), x:mul(back):sum():item()
            assert.is_true(math.abs(lhs - rhs) < 1e-9, string.format("%g against %g", lhs, rhs))
        end
    end)

    it("folded columns are im2col's with the batch moved inside; col2im_folded undoes them", function()
        tide.manual_seed(9)
        local x = tide.randn(3, 2, 6, 5)
        for _, geom in ipairs({ { 3, 3, 1, 1, 0, 0 }, { 2, 3, 2, 1, 1, 1 } }) do
            local cols = K.im2col(x, table.unpack(geom))
            local folded = K.im2col_folded(x, table.unpack(geom))
            assert.are.same({ cols.shape[2], 3, cols.shape[3] }, folded.shape)
            assert.are.equal(0, max_diff(folded, cols:transpose(1, 2)))
            local a = K.col2im(cols, 2, 6, 5, table.unpack(geom))
            local b = K.col2im_folded(folded, 2, 6, 5, table.unpack(geom))
            assert.are.equal(0, max_diff(a, b))
        end
        local ok, err = pcall(K.col2im_folded, tide.zeros(3, 3, 16), 2, 6, 5, 3, 3, 1, 1, 0,
            0)
        assert.is_false(ok)
        assert.is_truthy(err:find("tide: col2im_folded: columns of shape [3, 3, 16] do not fit "
            .. "[18, N, 12]", 1, true), err)
    end)

    it("relu's gradient in one pass: 0 where x <= 0 (0 and -0 too), else g (NaN too), as PyTorch",
        function()
            -- PyTorch 1.13: torch.relu(x).backward(g) on these x gives g.grad = 0, 0, 30, 40, 50,
            -- 0, 70, 0 (threshold_backward: x <= 0 ? 0 : g, and NaN <= 0 is false)
            for _, dtype in ipairs({ "float32", "float64" }) do
                local x = tide.tensor({ -1, 0, 2, NAN, 3, -0.0, math.huge, -math.huge },
                    { dtype = dtype })
                local g = tide.tensor({ 10, 20, 30, 40, 50, 60, 70, 80 }, { dtype = dtype })
                assert.are.same({ 0, 0, 30, 40, 50, 0, 70, 0 }, K.relu_backward(g, x):totable())
                local xa = x:clone():requires_grad_()
                xa:relu():backward(g)
                assert.are.same({ 0, 0, 30, 40, 50, 0, 70, 0 }, xa.grad:totable())
            end
            -- long rows run the vectorized loop: every lane against the rule
            local x = tide.randn(1000)
            x:narrow(1, 1, 4):copy_(tide.tensor({ 0, -0.0, NAN, 1 }))
            local g = tide.randn(1000)
            local gx, xs, gs = K.relu_backward(g, x):totable(), x:totable(), g:totable()
            for i = 1, 1000 do
                local want = xs[i] <= 0 and 0 or gs[i]
                assert(gx[i] == want, string.format("element %d: x %g g %g gave %g", i, xs[i],
                    gs[i], gx[i]))
            end
            local xt = tide.randn(4, 3):t() -- strided operands
            local gt = tide.randn(4, 3):t()
            assert.are.equal(0, max_diff(K.relu_backward(gt, xt), gt:mul(xt:gt(0))))
            local ok, err = pcall(K.relu_backward, tide.zeros(2), tide.zeros(3))
            assert.is_false(ok)
            assert.is_truthy(err:find("tide: relu_backward: input of shape [3] must have "
                .. "grad_out's shape [2]", 1, true), err)
        end)
end)

describe("CNN kernels on cuda:0 #cuda", function()
    it("pooling, folded columns and relu's gradient match the CPU", function()
        if not tide.cuda.is_available() then
            pending("no CUDA device")
            return
        end
        tide.manual_seed(11)
        for _, dtype in ipairs({ "float32", "float64" }) do
            local x = tide.randn(2, 3, 7, 8, { dtype = dtype })
            local xg = x:to("cuda:0")
            local y, ix = K.maxpool2d(x, 2, 2, 2, 2, 0, 0)
            local yg, ixg = K.maxpool2d(xg, 2, 2, 2, 2, 0, 0)
            assert.are.equal(0, max_diff(yg, y))
            assert.are.equal(0, max_diff(ixg, ix))
            local geom = { 3, 3, 1, 1, 1, 1 }
            local f = K.im2col_folded(x, table.unpack(geom))
            local fg = K.im2col_folded(xg, table.unpack(geom))
            assert.are.equal(0, max_diff(fg, f))
            local c = tide.randn(f.shape, { dtype = dtype })
            local b = K.col2im_folded(c, 3, 7, 8, table.unpack(geom))
            local bg = K.col2im_folded(c:to("cuda:0"), 3, 7, 8, table.unpack(geom))
            assert.is_true(max_diff(bg, b) < 1e-5)
            local g = tide.randn(2, 3, 7, 8, { dtype = dtype })
            assert.are.equal(0, max_diff(K.relu_backward(g:to("cuda:0"), xg),
                K.relu_backward(g, x)))
            local xs = tide.tensor({ -1, 0, 2, NAN, -0.0 }, { dtype = dtype }):to("cuda:0")
            local gs = tide.tensor({ 10, 20, 30, 40, 50 }, { dtype = dtype }):to("cuda:0")
            assert.are.same({ 0, 0, 30, 40, 0 }, K.relu_backward(gs, xs):to("cpu"):totable())
        end
    end)
end)
