-- tide.nn.functional (API.md "nn.functional"): each function against its module, or against
-- hand-computed values where no module exists; argument errors name the function at the user's
-- line; options tables reject unknown keys; the options not built yet say so.
local tide = require("tide")
local nn = require("tide.nn")
local F = require("tide.nn.functional")
local gradcheck = require("spec.support.gradcheck")

local function flat(x, out)
    out = out or {}
    if type(x) == "table" then
        for _, v in ipairs(x) do
            flat(v, out)
        end
    else
        out[#out + 1] = x
    end
    return out
end

local function close(t, expected, tol)
    local got = t:cpu():reshape(-1):totable()
    local want = tide.is_tensor(expected) and expected:cpu():reshape(-1):totable() or flat(expected)
    assert.are.equal(#want, #got)
    for i = 1, #want do
        local g, w = got[i], want[i]
        if not (g == w or math.abs(g - w) <= (tol or 1e-5)) then
            error(string.format("element %d: got %.7g, expected %.7g", i, g, w), 2)
        end
    end
end

local function same_shape(t, shape)
    assert.are.same(shape, t.shape)
end

-- f(...) must fail with msg at the line that called it (here, the pcall's), never inside tide
local function raises_here(msg, f, ...)
    local line = debug.getinfo(1, "l").currentline + 1
    local ok, err = pcall(f, ...)
    assert.is_false(ok)
    assert.are.equal("spec/functional_spec.lua:" .. line .. ": tide: " .. msg, err)
end

local x = tide.tensor({ { -2.0, -0.5, 0.0 }, { 0.5, 1.0, 3.0 } })

describe("nn.functional activations", function()
    it("match the modules and methods", function()
        close(F.relu(x), nn.ReLU()(x))
        close(F.sigmoid(x), nn.Sigmoid()(x))
        close(F.tanh(x), nn.Tanh()(x))
        close(F.gelu(x), nn.GELU()(x))
        close(F.softmax(x, 2), nn.Softmax(2)(x))
        close(F.softmax(x), nn.Softmax()(x))
        close(F.log_softmax(x, 1), nn.LogSoftmax(1)(x))
    end)

    it("compute the formulas of PyTorch", function()
        close(F.silu(x), { -0.2384058, -0.1887703, 0, 0.3112297, 0.7310586, 2.8577223 })
        close(F.gelu(x, { approximate = "tanh" }),
            { -0.0454023, -0.1542859, 0, 0.3457141, 0.8411920, 2.9963627 })
        close(F.leaky_relu(x), { -0.02, -0.005, 0, 0.5, 1, 3 })
        close(F.leaky_relu(x, 0.2), { -0.4, -0.1, 0, 0.5, 1, 3 })
        close(F.leaky_relu(x, { negative_slope = 0.2 }), { -0.4, -0.1, 0, 0.5, 1, 3 })
        close(F.elu(x), { math.exp(-2) - 1, math.exp(-0.5) - 1, 0, 0.5, 1, 3 })
        close(F.elu(x, 2), { 2 * (math.exp(-2) - 1), 2 * (math.exp(-0.5) - 1), 0, 0.5, 1, 3 })
        local sp = {}
        for i, v in ipairs({ -2.0, -0.5, 0.0, 0.5, 1.0, 3.0 }) do
            sp[i] = math.log(1 + math.exp(v))
        end
        close(F.softplus(x), sp)
        -- beta x above threshold: x itself
        close(F.softplus(x, { beta = 2, threshold = 1 }),
            { math.log(1 + math.exp(-4)) / 2, math.log(1 + math.exp(-1)) / 2, math.log(2) / 2,
                math.log(1 + math.exp(1)) / 2, 1, 3 })
    end)

    it("have gradients (finite differences)", function()
        local function R()
            return tide.tensor({ { -1.3, -0.4, 0.7 }, { 0.2, 1.1, 2.5 } },
                { dtype = "float64", requires_grad = true })
        end
        for _, f in ipairs({ F.silu, F.leaky_relu, F.elu, F.softplus, function(t)
            return F.gelu(t, { approximate = "tanh" })
        end }) do
            assert.is_true(gradcheck(f, { R() }))
        end
    end)

    it("check their arguments at the user's line", function()
        raises_here("relu: expected input to be a tensor, got number", F.relu, 1)
        raises_here('gelu: unknown option "aproximate" (did you mean "approximate"?)', F.gelu, x,
            { aproximate = "tanh" })
        raises_here('gelu: unknown approximate "fast"; use "none" or "tanh"', F.gelu, x,
            { approximate = "fast" })
        raises_here("leaky_relu: in-place operation on a leaf tensor that requires grad; leave " ..
            "inplace off, or wrap it in tide.no_grad", F.leaky_relu,
            tide.ones(2):requires_grad_(true), { inplace = true })
        raises_here("softplus: expected beta to be a number, got string", F.softplus, x,
            { beta = "2" })
        raises_here("softmax: expected dim to be an integer, got 1.5", F.softmax, x, 1.5)
        -- "1" stands where PyTorch's alpha goes
        raises_here("elu: expected alpha to be a number, got string", F.elu, x, "1")
    end)
end)

describe("nn.functional linear and convolutions", function()
    it("linear and conv2d match nn.Linear and nn.Conv2d, gradients included", function()
        local lin = nn.Linear(3, 2)
        local a = tide.randn({ 4, 3 }, { requires_grad = true })
        local y1 = lin(a)
        local y2 = F.linear(a, lin.weight, lin.bias)
        close(y2, y1)
        y2:sum():backward()
        close(a.grad, lin.weight:sum(1):expand(4, 3))
        close(F.linear(a, lin.weight), a:matmul(lin.weight:t()))

        local conv = nn.Conv2d(2, 3, 3, { stride = 2, padding = 1 })
        local img = tide.randn(2, 2, 5, 5)
        close(F.conv2d(img, conv.weight, conv.bias, { stride = 2, padding = 1 }), conv(img), 1e-5)
        close(F.conv2d(img, conv.weight, nil, { stride = { 2, 2 }, padding = 1 }),
            conv(img):sub(conv.bias:view(1, 3, 1, 1)), 1e-5)
    end)

    it("conv1d is conv2d on a height of 1", function()
        local w = tide.tensor({ { { 1.0, 0.0, -1.0 } } }, { dtype = "float32" }) -- [1, 1, 3]
        local s = tide.tensor({ { { 1.0, 2.0, 4.0, 8.0 } } }, { dtype = "float32" }) -- [1, 1, 4]
        close(F.conv1d(s, w), { 1 - 4, 2 - 8 })
        close(F.conv1d(s, w, tide.tensor({ 10.0 }), { padding = 1 }), { 8, 7, 4, 14 })
        close(F.conv1d(s, w, nil, { stride = 2, padding = 1 }), { -2, -6 })
        same_shape(F.conv1d(tide.randn(2, 3, 7), tide.randn(4, 3, 2)), { 2, 4, 6 })
    end)

    it("conv2d's dilation spaces the taps, groups split the channels", function()
        -- 1x1x4x4 image 1..16, a 2x2 kernel of ones with dilation 2: x[h,w] + x[h,w+2] +
        -- x[h+2,w] + x[h+2,w+2]
        local img = tide.arange(1, 17):view(1, 1, 4, 4):float()
        local ones = tide.ones({ 1, 1, 2, 2 })
        close(F.conv2d(img, ones, nil, { dilation = 2 }), { 24, 28, 40, 44 })
        -- taps w-1 and w+2 (padding 1 reads 0): row 1 is (0+3)+(0+7), (1+4)+(5+8), (2)+(6)
        close(F.conv2d(img, ones, nil, { dilation = { 1, 3 }, padding = { 0, 1 } }),
            { 10, 18, 8, 18, 34, 16, 26, 50, 24 })
        -- groups: each output channel sees its own group's input channels only
        local x = tide.randn(2, 4, 5, 5)
        local w = tide.randn(6, 2, 3, 3)
        local y = F.conv2d(x, w, nil, { groups = 2, padding = 1 })
        local y1 = F.conv2d(x:narrow(2, 1, 2), w:narrow(1, 1, 3), nil, { padding = 1 })
        local y2 = F.conv2d(x:narrow(2, 3, 2), w:narrow(1, 4, 3), nil, { padding = 1 })
        close(y:narrow(2, 1, 3), y1:reshape(-1):totable(), 1e-5)
        close(y:narrow(2, 4, 3), y2:reshape(-1):totable(), 1e-5)
    end)

    it("check their arguments at the user's line", function()
        local w = tide.randn(2, 3)
        raises_here("linear: expected weight to be a tensor, got nil", F.linear, x)
        raises_here("linear: expected input with last dim 3 (weight {2, 3}), got {3, 2}",
            F.linear, tide.randn(3, 2), w)
        raises_here("linear: expected bias of shape {2}, got {3}", F.linear, x, w, tide.randn(3))
        raises_here("conv2d: expected 4-D input {N, C, H, W} or unbatched {C, H, W}, got {2, 3}",
            F.conv2d, x,
            tide.randn(1, 1, 1, 1))
        raises_here('conv2d: unknown option "padding_mode"; options are stride, padding, ' ..
            'dilation, groups', F.conv2d,
            tide.randn(1, 1, 3, 3), tide.randn(1, 1, 1, 1), nil, { padding_mode = "zeros" })
        raises_here("conv2d: expected input with 2 channels (dim 2, as weight {2, 1, 1, 1} " ..
            "with groups 2), got 1", F.conv2d, tide.randn(1, 1, 3, 3), tide.randn(2, 1, 1, 1),
            nil, { groups = 2 })
        raises_here("conv2d: out_channels 3 (weight {3, 1, 1, 1}) is not divisible by groups 2",
            F.conv2d, tide.randn(1, 2, 3, 3), tide.randn(3, 1, 1, 1), nil, { groups = 2 })
        raises_here("conv2d: expected groups to be an integer >= 1, got 0", F.conv2d,
            tide.randn(1, 1, 3, 3), tide.randn(1, 1, 1, 1), nil, { groups = 0 })
        raises_here("conv2d: expected dilation to be an integer >= 1, got 0", F.conv2d,
            tide.randn(1, 1, 3, 3), tide.randn(1, 1, 1, 1), nil, { dilation = { 1, 0 } })
        raises_here("conv2d: input 4x4 (padding 0,0) is smaller than the kernel 3x3 " ..
            "(dilation 2,2)", F.conv2d, tide.randn(1, 1, 4, 4), tide.randn(1, 1, 3, 3), nil,
            { dilation = 2 })
        raises_here("conv1d: expected input with 4 channels (dim 2, as weight {2, 2, 1} with " ..
            "groups 2), got 2", F.conv1d, tide.randn(1, 2, 3), tide.randn(2, 2, 1), nil,
            { groups = 2 })
        raises_here("conv_transpose2d: output_padding 2,2 must be smaller than the stride 2,2 " ..
            "or the dilation 1,1", F.conv_transpose2d, tide.randn(1, 1, 3, 3),
            tide.randn(1, 1, 2, 2), nil, { stride = 2, output_padding = 2 })
        raises_here("conv_transpose2d: in_channels 3 (weight {3, 1, 2, 2}) is not divisible by " ..
            "groups 2", F.conv_transpose2d, tide.randn(1, 3, 3, 3), tide.randn(3, 1, 2, 2), nil,
            { groups = 2 })
        raises_here('conv1d: unknown option "strides" (did you mean "stride"?)', F.conv1d,
            tide.randn(1, 1, 3), tide.randn(1, 1, 1), nil, { strides = 2 })
        raises_here("conv2d: input 2x2 (padding 0,0) is smaller than the kernel 3x3", F.conv2d,
            tide.randn(1, 1, 2, 2), tide.randn(1, 1, 3, 3))
    end)
end)

describe("nn.functional pooling", function()
    local img = tide.arange(1, 17):view(1, 1, 4, 4):float()

    it("max_pool2d matches nn.MaxPool2d", function()
        close(F.max_pool2d(img, 2), nn.MaxPool2d(2)(img))
        close(F.max_pool2d(img, 3, { stride = 1, padding = 1 }), nn.MaxPool2d(3, 1, 1)(img))
    end)

    it("avg_pool2d averages each window, padded cells counted unless told not to", function()
        close(F.avg_pool2d(img, 2), { 3.5, 5.5, 11.5, 13.5 })
        -- 3x3 windows around each cell: 4 cells in a corner, 6 on an edge, 9 inside
        local with, without = {}, {}
        for r = 1, 4 do
            for c = 1, 4 do
                local s, n = 0, 0
                for i = r - 1, r + 1 do
                    for j = c - 1, c + 1 do
                        if i >= 1 and i <= 4 and j >= 1 and j <= 4 then
                            s, n = s + (i - 1) * 4 + j, n + 1
                        end
                    end
                end
                with[#with + 1], without[#without + 1] = s / 9, s / n
            end
        end
        close(F.avg_pool2d(img, 3, { stride = 1, padding = 1 }), with)
        close(F.avg_pool2d(img, 3, { stride = 1, padding = 1, count_include_pad = false }), without)
        close(F.avg_pool2d(img, 3, { stride = 3, padding = 1 }), { 14 / 9, 22 / 9, 46 / 9, 54 / 9 })
        local t = tide.randn({ 1, 2, 4, 4 }, { dtype = "float64", requires_grad = true })
        assert.is_true(gradcheck(function(u)
            return F.avg_pool2d(u, 2, { stride = 1 })
        end, { t }))
    end)

    it("check their arguments at the user's line", function()
        raises_here("max_pool2d: expected input {N, C, H, W} or {C, H, W}, got {2, 3}", F.max_pool2d, x, 2)
        raises_here("max_pool2d: expected ceil_mode to be a boolean, got number", F.max_pool2d,
            img, 2, { ceil_mode = 1 })
        raises_here("avg_pool2d: expected divisor_override to be a non-zero integer, got 0",
            F.avg_pool2d, img, 2, { divisor_override = 0 })
        raises_here("avg_pool2d: kernel 5x5 is larger than the padded input 4x4; use a smaller " ..
            "kernel or more padding", F.avg_pool2d, img, 5)
    end)

    -- PyTorch's size rule: with ceil_mode a window that starts inside the input counts, so a
    -- 1-wide input pools to 1 under kernel 2, stride 2 (timm's downsample_avg on a last 1x1
    -- stage); where none starts inside, the same error as without ceil_mode
    it("with ceil_mode pool an input narrower than the kernel when a window starts in it", function()
        local one = tide.tensor({ { { { 3.0 } } } }, { dtype = "float32" })
        close(F.avg_pool2d(one, 2, { stride = 2, ceil_mode = true }), { { { { 3 } } } })
        close(F.max_pool2d(one, 2, { stride = 2, ceil_mode = true }), { { { { 3 } } } })
        close(nn.MaxPool2d(2, 2, { ceil_mode = true })(one), { { { { 3 } } } })
        close(F.avg_pool1d(one[1], 2, { stride = 2, ceil_mode = true }), { { { 3 } } })
        raises_here("avg_pool2d: kernel 3x3 is larger than the padded input 1x1; use a smaller " ..
            "kernel or more padding", F.avg_pool2d, one, 3, { stride = 2, ceil_mode = true })
        raises_here("avg_pool1d: kernel 3 is larger than the padded input 1; use a smaller " ..
            "kernel or more padding", F.avg_pool1d, one[1], 3, { stride = 2, ceil_mode = true })
        raises_here("avg_pool1d: kernel 2 is larger than the padded input 1; use a smaller " ..
            "kernel or more padding", F.avg_pool1d, one[1], 2, { stride = 2 })
    end)
end)

describe("nn.functional dropout and normalization", function()
    it("dropout matches nn.Dropout under the same seed, and is the identity when not training", function()
        local t = tide.ones(1000)
        tide.manual_seed(7)
        local a = F.dropout(t, 0.3)
        tide.manual_seed(7)
        local b = nn.Dropout(0.3)(t)
        close(a, b)
        assert.are.equal(t, F.dropout(t, { p = 0.3, training = false }))
        close(F.dropout(t, { p = 1 }), tide.zeros(1000))
        raises_here("dropout: expected a probability p in [0, 1], got 1.5", F.dropout, t, 1.5)
        raises_here("dropout: in-place operation on a leaf tensor that requires grad; leave " ..
            "inplace off, or wrap it in tide.no_grad", F.dropout,
            tide.ones(2):requires_grad_(true), { inplace = true })
    end)

    it("dropout2d matches nn.Dropout2d under the same seed: whole channels, identity when not "
        .. "training", function()
        local t = tide.ones(4, 6, 3, 3)
        tide.manual_seed(11)
        local a = F.dropout2d(t, 0.5)
        tide.manual_seed(11)
        local b = nn.Dropout2d(0.5)(t)
        close(a, b)
        -- each channel is all zeros or all 2 (1 / (1 - p))
        local flat = a:reshape(24, 9)
        for i = 1, 24 do
            local lo, hi = flat[i]:min():item(), flat[i]:max():item()
            assert.are.equal(lo, hi)
            assert.is_true(lo == 0 or lo == 2, tostring(lo))
        end
        assert.are.equal(t, F.dropout2d(t, { p = 0.5, training = false }))
        close(F.dropout2d(tide.ones(2, 3, 3), { p = 1 }), tide.zeros(2, 3, 3))
        raises_here("dropout2d: expected a probability p in [0, 1], got 2", F.dropout2d, t, 2)
        -- a 2-D input is PyTorch 1.13's deprecated case (spec/porting_functional3_spec.lua)
        raises_here("dropout2d: expected input {N, C, H, W} or {C, H, W}, got {6}",
            F.dropout2d, tide.ones(6))
        raises_here("dropout2d: in-place operation on a leaf tensor that requires grad; leave " ..
            "inplace off, or wrap it in tide.no_grad", F.dropout2d,
            tide.ones(1, 2, 2):requires_grad_(true), { inplace = true })
    end)

    it("layer_norm matches nn.LayerNorm", function()
        local ln = nn.LayerNorm(3)
        local w, b = tide.tensor({ 1.0, 2.0, 3.0 }, { dtype = "float32" }), tide.tensor({ 0.5, 0.0, -0.5 })
        ln.weight, ln.bias = w:requires_grad_(true), b:requires_grad_(true)
        close(F.layer_norm(x, 3, { weight = w, bias = b }), ln(x))
        close(F.layer_norm(x, { 2, 3 }), nn.LayerNorm({ 2, 3 })(x))
        raises_here("layer_norm: expected input ending in {4}, got {2, 3}", F.layer_norm, x, 4)
        raises_here('layer_norm: unknown option "epsilon"; options are weight, bias, eps', F.layer_norm, x,
            3, { epsilon = 1e-3 })
    end)

    it("group_norm normalizes each group of channels", function()
        local t = tide.randn(2, 4, 3)
        -- one group: layer_norm over {C, L}; C groups: each channel alone
        close(F.group_norm(t, 1), F.layer_norm(t, { 4, 3 }), 1e-5)
        close(F.group_norm(t, 4), F.layer_norm(t, 3), 1e-5)
        local f32 = { dtype = "float32" } -- (Lua 5.1 reads 1.0 as an integer: int64)
        local w = tide.tensor({ 1.0, 2.0, 3.0, 4.0 }, f32)
        local b = tide.tensor({ 0.0, 1.0, 0.0, 1.0 }, f32)
        close(F.group_norm(t, 2, { weight = w, bias = b }),
            F.group_norm(t, 2):mul(w:view(1, 4, 1)):add(b:view(1, 4, 1)), 1e-5)
        raises_here("group_norm: expected input {N, C, ...} with C divisible by num_groups = 3, " ..
            "got {2, 4, 3}", F.group_norm, t, 3)
    end)

    it("batch_norm matches nn.BatchNorm1d and nn.BatchNorm2d, running estimates included", function()
        local bn = nn.BatchNorm2d(3)
        local t = tide.randn(4, 3, 2, 2)
        local rm, rv = tide.zeros(3), tide.ones(3)
        close(F.batch_norm(t, rm, rv, { training = true, weight = bn.weight, bias = bn.bias }),
            bn(t), 1e-5)
        close(rm, bn.running_mean, 1e-6)
        close(rv, bn.running_var, 1e-6)
        bn:eval()
        close(F.batch_norm(t, rm, rv), bn(t), 1e-5)
        local b1 = nn.BatchNorm1d(3)
        local u = tide.randn(5, 3)
        close(F.batch_norm(u, nil, nil, { training = true }), b1(u), 1e-5)
        raises_here("batch_norm: running_mean and running_var are needed when training is " ..
            "false; pass them, or {training = true}", F.batch_norm, u)
        raises_here("batch_norm: expected running_mean with 3 elements (the input's channels), " ..
            "got {4}", F.batch_norm, u, tide.zeros(4), tide.ones(3))
        raises_here("batch_norm: expected more than 1 value per channel in training, got input " ..
            "{1, 3}", F.batch_norm, tide.randn(1, 3), nil, nil, { training = true })
    end)

    it("normalize divides by the p-norm along dim, never by less than eps", function()
        local t = tide.tensor({ { 3.0, 4.0 }, { 0.0, 0.0 } })
        close(F.normalize(t), { 0.6, 0.8, 0, 0 })
        close(F.normalize(t, { p = 1 }), { 3 / 7, 4 / 7, 0, 0 })
        close(F.normalize(t, { p = math.huge }), { 0.75, 1, 0, 0 })
        close(F.normalize(t, { dim = 1 }), { 1, 1, 0, 0 })
        -- a zero row: the gradient is 1/eps (as PyTorch), finite, never NaN from the root
        local z = tide.zeros({ 1, 2 }, { dtype = "float64", requires_grad = true })
        F.normalize(z):sum():backward()
        close(z.grad, { 1e12, 1e12 }, 1)
        raises_here("normalize: expected p >= 0, got -2", F.normalize, t, { p = -2 })
    end)
end)

describe("nn.functional embeddings, one_hot and pad", function()
    it("embedding matches nn.Embedding", function()
        local emb = nn.Embedding(5, 2)
        local ids = tide.tensor({ { 1, 5 }, { 3, 3 } })
        close(F.embedding(ids, emb.weight), emb(ids))
        raises_here("embedding: id 6 out of range for 5 embeddings; ids are 1-based, in 1..5",
            F.embedding, tide.tensor({ 6 }), emb.weight)
        -- sparse = true: the same values, the weight's gradient dense (optim.SparseAdam)
        close(F.embedding(ids, emb.weight, { sparse = true }), emb(ids))
        raises_here("embedding: expected sparse to be a boolean, got number (1)", F.embedding,
            ids, emb.weight, { sparse = 1 })
        raises_here("embedding: expected scale_grad_by_freq to be a boolean, got number",
            F.embedding, ids, emb.weight, { scale_grad_by_freq = 1 })
    end)

    it("one_hot marks 1-based classes", function()
        local h = F.one_hot(tide.tensor({ 2, 1, 3 }))
        assert.are.equal("int64", h.dtype)
        assert.are.same({ { 0, 1, 0 }, { 1, 0, 0 }, { 0, 0, 1 } }, h:totable())
        same_shape(F.one_hot(tide.tensor({ { 1 }, { 2 } }), 4), { 2, 1, 4 })
        raises_here("one_hot: class 5 out of range for 4 classes; classes are 1-based, in 1..4",
            F.one_hot, tide.tensor({ 5 }), 4)
        raises_here("one_hot: expected integer classes (int64, 1-based), got float32; convert " ..
            "with :long()", F.one_hot, x)
    end)

    it("pad adds constant cells, or crops with negative sizes", function()
        local t = tide.tensor({ { 1.0, 2.0 }, { 3.0, 4.0 } })
        close(F.pad(t, { 1, 0 }), { 0, 1, 2, 0, 3, 4 })
        close(F.pad(t, { 0, 1, 1, 0 }, { value = 9 }), { 9, 9, 9, 1, 2, 9, 3, 4, 9 })
        close(F.pad(t, { -1, 1 }), { 2, 0, 4, 0 })
        local g = tide.tensor({ 1.0, 2.0 }, { requires_grad = true })
        F.pad(g, { 2, 1 }):mul(tide.arange(1, 6):float()):sum():backward()
        close(g.grad, { 3, 4 })
        raises_here('pad: mode "reflect" needs each size smaller than its dim, got 2, 1 for ' ..
            "dim 3 of size 2 (input {1, 1, 2})", F.pad, tide.ones(1, 1, 2), { 2, 1 },
            { mode = "reflect" })
        raises_here("pad: expected pad as a table of 2 sizes per padded dim (at most 4 for a " ..
            "2-D input), got 3 sizes", F.pad, t, { 1, 1, 1 })
    end)
end)

describe("nn.functional losses", function()
    local logits = tide.tensor({ { 1.0, 2.0, 0.5 }, { 0.1, -1.0, 2.0 } })
    local target = tide.tensor({ 2, 3 })
    local a, b = tide.tensor({ 0.5, -1.0, 2.0 }), tide.tensor({ 1.0, 1.0, -1.0 })

    it("match the loss modules", function()
        for _, r in ipairs({ "mean", "sum", "none" }) do
            close(F.cross_entropy(logits, target, { reduction = r }),
                nn.CrossEntropyLoss({ reduction = r })(logits, target))
            close(F.nll_loss(logits, target, { reduction = r }),
                nn.NLLLoss({ reduction = r })(logits, target))
            close(F.mse_loss(a, b, { reduction = r }), nn.MSELoss({ reduction = r })(a, b))
            close(F.binary_cross_entropy_with_logits(a, b:abs(), { reduction = r }),
                nn.BCEWithLogitsLoss({ reduction = r })(a, b:abs()))
        end
        close(F.cross_entropy(logits, target), nn.CrossEntropyLoss()(logits, target))
    end)

    it("l1, smooth l1, binary cross-entropy and KL divergence", function()
        close(F.l1_loss(a, b), (0.5 + 2 + 3) / 3)
        close(F.l1_loss(a, b, { reduction = "none" }), { 0.5, 2, 3 })
        close(F.smooth_l1_loss(a, b, { reduction = "none" }), { 0.125, 1.5, 2.5 })
        close(F.smooth_l1_loss(a, b, { beta = 4, reduction = "none" }), { 0.25 / 8, 4 / 8, 9 / 8 })
        close(F.smooth_l1_loss(a, b, { beta = 0, reduction = "sum" }), 5.5)
        local p, y = tide.tensor({ 0.9, 0.2, 0.0 }), tide.tensor({ 1.0, 0.0, 1.0 })
        close(F.binary_cross_entropy(p, y, { reduction = "none" }),
            { -math.log(0.9), -math.log(0.8), 100 })
        close(F.binary_cross_entropy(p, y, { weight = tide.tensor({ 2.0, 1.0, 0.0 }),
            reduction = "sum" }), -2 * math.log(0.9) - math.log(0.8))
        local lp, q = tide.tensor({ math.log(0.5), math.log(0.5) }), tide.tensor({ 0.25, 0.75 })
        local kl = 0.25 * math.log(0.5) + 0.75 * math.log(1.5)
        close(F.kl_div(lp, q, { reduction = "sum" }), kl)
        close(F.kl_div(lp, q, { reduction = "sum", log_target = true }),
            math.exp(0.25) * (0.25 - math.log(0.5)) + math.exp(0.75) * (0.75 - math.log(0.5)))
        close(F.kl_div(lp, tide.tensor({ 0.0, 1.0 }), { reduction = "none" }),
            { 0, -math.log(0.5) })
        close(F.kl_div(lp:view(1, 2), q:view(1, 2), { reduction = "batchmean" }), kl)
    end)

    it("check their arguments at the user's line", function()
        raises_here("cross_entropy: target 4 out of range for 3 classes; class targets are " ..
            "1-based, in 1..3", F.cross_entropy, logits, tide.tensor({ 1, 4 }))
        raises_here("cross_entropy: expected label_smoothing in [0, 1], got 2",
            F.cross_entropy, logits, target, { label_smoothing = 2 })
        raises_here("mse_loss: unknown reduction 'avg'; use \"mean\", \"sum\" or \"none\"",
            F.mse_loss, a, b, { reduction = "avg" })
        raises_here("l1_loss: expected target of the input's shape {3}, got {2}", F.l1_loss, a,
            tide.zeros(2))
        raises_here("binary_cross_entropy_with_logits: pos_weight {2} does not broadcast to the " ..
            "input's shape {3}", F.binary_cross_entropy_with_logits, a, b,
            { pos_weight = tide.ones(2) })
        raises_here('kl_div: unknown option "logtarget" (did you mean "log_target"?)', F.kl_div,
            a, b, { logtarget = true })
    end)
end)

describe("nn.functional.scaled_dot_product_attention", function()
    local q = tide.tensor({ { 1.0, 0.0 }, { 0.0, 1.0 } })
    local k = tide.tensor({ { 1.0, 0.0 }, { 0.0, 1.0 }, { 1.0, 1.0 } })
    local v = tide.tensor({ { 1.0 }, { 2.0 }, { 3.0 } })

    local function expected(mask)
        local out = {}
        for i = 1, 2 do
            local w, s = {}, 0
            for j = 1, 3 do
                local dot = 0
                for e = 1, 2 do
                    dot = dot + q:totable()[i][e] * k:totable()[j][e]
                end
                w[j] = (mask and not mask[i][j]) and 0 or math.exp(dot / math.sqrt(2))
                s = s + w[j]
            end
            out[i] = (w[1] * 1 + w[2] * 2 + w[3] * 3) / s
        end
        return out
    end

    it("is softmax(q k^T / sqrt(E)) v, with boolean, causal and additive masks", function()
        close(F.scaled_dot_product_attention(q, k, v), expected())
        close(F.scaled_dot_product_attention(q, k, v, { is_causal = true }),
            expected({ { true, false, false }, { true, true, false } }))
        local m = { { true, false, true }, { false, true, true } }
        close(F.scaled_dot_product_attention(q, k, v, { attn_mask = tide.tensor(m) }), expected(m))
        local add = tide.tensor({ { 0.0, -math.huge, 0.0 }, { -math.huge, 0.0, 0.0 } })
        close(F.scaled_dot_product_attention(q, k, v, { attn_mask = add }), expected(m))
        same_shape(F.scaled_dot_product_attention(tide.randn(2, 4, 5, 8), tide.randn(2, 4, 6, 8),
            tide.randn(2, 4, 6, 3)), { 2, 4, 5, 3 })
    end)

    it("checks its arguments at the user's line", function()
        raises_here("scaled_dot_product_attention: pass attn_mask or is_causal, not both",
            F.scaled_dot_product_attention, q, k, v, { attn_mask = tide.tensor({ true }),
                is_causal = true })
        raises_here("scaled_dot_product_attention: expected query {..., L, E}, key {..., S, E} " ..
            "and value {..., S, Ev}, got {2, 2}, {3, 2} and {2, 1}",
            F.scaled_dot_product_attention, q, k, tide.zeros(2, 1))
        raises_here('scaled_dot_product_attention: unknown option "causal"; options are ' ..
            "attn_mask, is_causal, dropout_p, scale, enable_gqa", F.scaled_dot_product_attention,
            q, k, v, { causal = true })
    end)
end)

describe("nn.functional is the user-facing API", function()
    it("offers every function of API.md and none of the modules' helpers", function()
        for _, name in ipairs({ "relu", "gelu", "silu", "leaky_relu", "elu", "softplus",
            "sigmoid", "tanh", "softmax", "log_softmax", "linear", "conv1d", "conv2d",
            "max_pool2d", "avg_pool2d", "dropout", "dropout2d", "layer_norm", "group_norm", "batch_norm",
            "embedding", "one_hot", "pad", "normalize", "cross_entropy", "nll_loss", "mse_loss",
            "l1_loss", "smooth_l1_loss", "binary_cross_entropy",
            "binary_cross_entropy_with_logits", "kl_div", "scaled_dot_product_attention" }) do
            assert.are.equal("function", type(F[name]), name)
        end
        for _, helper in ipairs({ "check_tensor", "check_device", "uniform_param", "pair",
            "shape_str", "on_host" }) do
            assert.is_nil(F[helper], helper)
        end
        assert.are.equal(F, nn.functional)
    end)
end)
