-- unbatched_conv_spec.lua — PyTorch's unbatched input ({C, L}, {C, H, W}, {C, D, H, W}) to every
-- convolution, functional and module, transposed or not: the batched result of a batch of one,
-- its gradients, and the error naming both forms for any other rank.
local tide = require("tide")
local nn, F = tide.nn, tide.nn.functional

local function max_diff(a, b)
    return (a - b):abs():max():item()
end

-- each case: the functional, its module, an unbatched input's shape and the weight's
local CASES = {
    { "conv1d", "Conv1d", { 3, 6 }, { 4, 3, 2 }, "{N, C, L} or unbatched {C, L}" },
    { "conv2d", "Conv2d", { 3, 5, 5 }, { 4, 3, 2, 2 }, "{N, C, H, W} or unbatched {C, H, W}" },
    { "conv3d", "Conv3d", { 3, 4, 4, 4 }, { 2, 3, 2, 2, 2 },
        "{N, C, D, H, W} or unbatched {C, D, H, W}" },
    { "conv_transpose1d", "ConvTranspose1d", { 3, 6 }, { 3, 4, 2 } },
    { "conv_transpose2d", "ConvTranspose2d", { 3, 5, 5 }, { 3, 4, 2, 2 } },
    { "conv_transpose3d", "ConvTranspose3d", { 3, 4, 4, 4 }, { 3, 2, 2, 2, 2 } },
}

describe("unbatched convolutions", function()
    for _, c in ipairs(CASES) do
        local fname, mname, xshape, wshape = c[1], c[2], c[3], c[4]

        it(fname .. " of an unbatched input is the batch of one's result, gradients too", function()
            tide.manual_seed(7)
            local x = tide.randn(xshape, { requires_grad = true })
            local w = tide.randn(wshape, { requires_grad = true })
            local opts = { stride = 2, padding = 1 }
            local y = F[fname](x, w, nil, opts)
            local yb = F[fname](x:detach():unsqueeze(1), w:detach(), nil, opts)
            assert.are.same(yb.shape[{ { 2, -1 } }], y.shape)
            assert.are.equal(0, max_diff(yb[1], y))
            y:sum():backward()
            local xb = x:detach():unsqueeze(1):requires_grad_()
            local wb = w:detach():requires_grad_()
            F[fname](xb, wb, nil, opts):sum():backward()
            assert.are.equal(0, max_diff(xb.grad[1], x.grad))
            assert.are.equal(0, max_diff(wb.grad, w.grad))
        end)

        it("nn." .. mname .. " takes an unbatched input as PyTorch's", function()
            tide.manual_seed(8)
            local transposed = fname:match("transpose") ~= nil
            local cin = wshape[1]
            local cout = transposed and wshape[2] or wshape[1]
            if not transposed then
                cin = wshape[2]
            end
            local m = nn[mname](cin, cout, 2, { padding = 1 })
            local x = tide.randn(xshape)
            local y = m(x)
            assert.are.equal(#xshape, y:dim())
            assert.are.equal(0, max_diff(m(x:unsqueeze(1))[1], y))
        end)

        it(fname .. " of another rank names both forms", function()
            local x = tide.randn({ 2, 3 })
            x = #xshape == 2 and tide.randn({ 3 }) or x
            local w = tide.randn(wshape)
            local before = x:clone()
            local ok, err = pcall(F[fname], x, w)
            assert.is_false(ok)
            assert.matches("tide: " .. fname .. ": expected", err, 1, true)
            if c[5] then
                assert.matches(c[5], err, 1, true)
            else
                assert.matches("unbatched", err, 1, true)
            end
            assert.are.equal(0, max_diff(before, x))
        end)
    end
end)
