-- cpu_half_spec.lua — float16 and bfloat16 compute on the CPU (src/cpu/half.c): every op is
-- its float32 kernel on the widened values with the result rounded once, so each result is bit
-- for bit `op(x:float()):to(dtype)`, through broadcasts, strided views and in-place writes,
-- whole or a block at a time (a bfloat16 matmul on oneDNN: to summation order, at the end);
-- random draws are the float32 draws rounded; the scratch copies are given back; nn layers,
-- autograd and an optimizer step run in half; SentenceEncoder takes {dtype = "bfloat16"}. The
-- op table's walk (spec/opinfo_spec.lua) covers every op on both dtypes against the CPU's
-- float32 result too.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional

local HALF = { "float16", "bfloat16" }

-- a [r, c] tensor of values that are not exact in half, the same on every run
local function values(r, c, seed)
    local t = {}
    for i = 1, r do
        t[i] = {}
        for j = 1, c do
            t[i][j] = math.sin(seed * 7.31 + i * 1.7 + j * 0.37) * 3
        end
    end
    return t
end

-- bit-identical: the same dtype, shape and values (as float64, which holds every half value)
local function same_bits(want, got, what)
    assert.are.equal(want.dtype, got.dtype, what)
    assert.are.same(want.shape, got.shape, what)
    assert.are.same(want:double():totable(), got:double():totable(), what)
end

for _, dt in ipairs(HALF) do
    describe(dt .. " on the CPU", function()
        local a, b, col, s
        before_each(function()
            a = tide.tensor(values(4, 6, 1), { dtype = dt })
            b = tide.tensor(values(4, 6, 2), { dtype = dt })
            col = tide.tensor(values(4, 1, 3), { dtype = dt }) -- broadcast along rows
            s = tide.tensor(values(6, 4, 4), { dtype = dt }):t() -- a strided view [4, 6]
        end)

        -- each case: the op on half tensors, and the same op on their float32 copies
        local CASES = {
            add = function(x, y) return x + y end,
            mul_broadcast = function(x, _, c) return x * c end,
            sub_strided = function(x, _, _, t) return t - x end,
            div_scalar = function(x) return x / 3 end,
            add_scalar_unrounded = function(x) return x + 0.1 end, -- 0.1 is not rounded to half
            pow = function(x) return x:abs():pow(1.5) end,
            exp = function(x) return x:exp() end,
            tanh_strided = function(_, _, _, t) return t:tanh() end,
            clamp = function(x) return x:clamp(-1, 1) end,
            gt = function(x, y) return x:gt(y) end,
            isfinite = function(x) return (x * 1e4):isfinite() end,
            sum = function(x) return x:sum() end,
            sum_rows = function(_, _, _, t) return t:sum(2) end,
            mean = function(x) return x:mean(1) end,
            max = function(x) return x:max(2) end,
            argmax = function(x) return x:argmax(2) end,
            cumsum = function(x) return x:cumsum(2) end,
            std = function(x) return x:std(2) end,
            logsumexp = function(x) return x:logsumexp(1) end,
            norm = function(x) return x:norm() end,
            rms_norm = function(x) return F.rms_norm(x, { 6 }, nil, 1e-3) end, -- eps: its own
            matmul = function(x, y) return x:matmul(y:t()) end,
            matmul_strided = function(x, _, _, t) return t:t():matmul(x) end,
            softmax = function(x) return F.softmax(x, 2) end,
            log_softmax = function(_, _, _, t) return F.log_softmax(t, 1) end,
            where = function(x, y) return tide.where(x:gt(0), x, y) end,
            sort = function(x) return (x:sort(2)) end,
            gelu = function(x) return F.gelu(x) end,
            layer_norm = function(x) return F.layer_norm(x, { 6 }) end,
            index_add = function(x, y)
                return x:clone():index_add_(1, tide.tensor({ 2, 2, 1 }), y:narrow(1, 1, 3))
            end,
            scatter_add = function(x, y)
                local idx = tide.tensor({ { 1, 2, 1, 3, 1, 2 } }):expand(4, 6):contiguous()
                return x:clone():scatter_add_(2, idx, y)
            end,
        }
        local names = {}
        for name in pairs(CASES) do
            names[#names + 1] = name
        end
        table.sort(names)
        for _, name in ipairs(names) do
            it(name .. ": the float32 result rounded once", function()
                local got = CASES[name](a, b, col, s)
                local want = CASES[name](a:float(), b:float(), col:float(), s:float())
                if want.dtype == "float32" then
                    want = want:to(dt)
                end
                same_bits(want, got, name)
            end)
        end

        it("in place: x:add_(x) reads the old values; a view writes through", function()
            local want = (a:float() * 2):to(dt)
            local x = a:clone()
            x:add_(x)
            same_bits(want, x, "add_")
            local row = x:narrow(1, 2, 1)
            row:mul_(0.5)
            same_bits(a:narrow(1, 2, 1), x:narrow(1, 2, 1), "mul_ on a view")
            same_bits(want:narrow(1, 3, 2), x:narrow(1, 3, 2), "the rows around the view")
        end)

        it("rounds a float64 once: a value a hair above a half-way point goes up", function()
            -- float32 would round each of these onto the half-way point and tie to even (down)
            local step = dt == "float16" and 2 ^ -10 or 2 ^ -7
            local sub = dt == "float16" and 2 ^ -24 or 2 ^ -133 -- the smallest subnormal
            local x = tide.tensor({ 1 + step / 2 + 2 ^ -40, -(1 + step / 2 + 2 ^ -40),
                1 + step / 2, sub / 2 + sub * 2 ^ -30, 1 + 3 * step / 2 - 2 ^ -40 },
                { dtype = "float64" })
            assert.are.same({ 1 + step, -(1 + step), 1, sub, 1 + step }, x:to(dt):double():totable())
            x:fill_(1 + step / 2 + 2 ^ -40)
            assert.are.equal(1 + step, tide.zeros({ 5 }, { dtype = dt }):copy_(x)[1]:item())
        end)

        it("draws the float32 stream, rounded", function()
            tide.manual_seed(11)
            local u = tide.rand({ 64 }, { dtype = dt })
            local n = tide.randn({ 8, 8 }, { dtype = dt })
            tide.manual_seed(11)
            same_bits(tide.rand({ 64 }):to(dt), u, "rand") -- none of these 64 is near 1
            same_bits(tide.randn({ 8, 8 }):to(dt), n, "randn")
            same_bits(tide.arange(0, 3, 0.1):to(dt), tide.arange(0, 3, 0.1, { dtype = dt }),
                "arange")
        end)

        it("keeps uniform draws below hi after rounding", function()
            -- 1 - 2^-12 rounds up to 1 in float16 (1 - 2^-9 in bfloat16): those draws take the
            -- largest value below 1, and 200,000 draws include some
            local below = dt == "float16" and 1 - 2 ^ -11 or 1 - 2 ^ -8
            tide.manual_seed(2)
            local u = tide.rand({ 200000 }, { dtype = dt })
            assert.are.equal(below, u:max():item())
            assert.is_true(u:min():item() >= 0)
            local v = tide.empty({ 200000 }, { dtype = dt }):uniform_(-4, 2)
            assert.are.equal(2 - (dt == "float16" and 2 ^ -10 or 2 ^ -7), v:max():item())
            assert.is_true(v:min():item() >= -4)
        end)

        it("gives its scratch memory back", function()
            local x, y = a:clone(), b:clone()
            collectgarbage()
            local before = tide.memory_stats("cpu").allocated
            for _ = 1, 3 do
                x:add_(y):mul_(y):div_(y) -- in place: no new tensor, only scratch copies
            end
            assert.are.equal(before, tide.memory_stats("cpu").allocated)
        end)

        it("trains a small model: forward, backward and an AdamW step in " .. dt, function()
            tide.manual_seed(3)
            local model = nn.Sequential(nn.Linear(6, 8), nn.LayerNorm(8), nn.GELU(),
                nn.Linear(8, 3))
            local ref = nn.Sequential(nn.Linear(6, 8), nn.LayerNorm(8), nn.GELU(),
                nn.Linear(8, 3))
            ref:load_state_dict(model:state_dict())
            model:to(dt)
            local target = tide.tensor({ 1, 3, 2, 1 })
            local out = model(a)
            assert.are.equal(dt, out.dtype)
            -- the same weights in float32 on the same (half) input: half-precision rounding apart
            local want = ref(a:float())
            local err = (out:float() - want):abs():max():item()
            assert.is_true(err < (dt == "bfloat16" and 0.1 or 0.02), "max error " .. err)

            local opt = tide.optim.AdamW(model:parameters(), { lr = 0.01 })
            local w0 = model[1].weight:clone()
            local loss = F.cross_entropy(out, target)
            loss:backward()
            assert.are.equal(dt, model[1].weight.grad.dtype)
            assert.is_true(model[1].weight.grad:float():abs():sum():item() > 0)
            opt:step()
            assert.are.equal(dt, model[1].weight.dtype)
            assert.is_true((model[1].weight:float() - w0:float()):abs():max():item() > 0)
        end)
    end)
end

describe("SentenceEncoder on the CPU in bfloat16", function()
    it("encodes with the float32 model's vectors to bfloat16 precision", function()
        local dir = "spec/fixtures/sentence_encoder"
        local SE = tide.models.SentenceEncoder
        local sentences = { "the cat sat on the mat", "computers have bugs", "what is love" }
        local want = SE.from_pretrained(dir):encode(sentences)
        local got = SE.from_pretrained(dir, { dtype = "bfloat16" }):encode(sentences)
        assert.are.equal("float32", got.dtype)
        assert.are.same({ 3, 32 }, got.shape)
        local cos = (got * want):sum(2)
        assert.is_true(cos:min():item() > 0.995, tostring(cos))
    end)
end)

-- Elementwise ops and softmax widen a block at a time on each thread (half.c): checked on
-- tensors past the thread grain and the block sizes, with broadcast and strided operands, rows
-- of softmax longer than a block (those widen whole tensors) and in-place writes.
for _, dt in ipairs(HALF) do
    describe(dt .. " on the CPU, in blocks", function()
        local big, wide, col, tr
        before_each(function()
            big = tide.tensor(values(90, 301, 5), { dtype = dt })
            col = tide.tensor(values(90, 1, 6), { dtype = dt })
            tr = tide.tensor(values(301, 90, 7), { dtype = dt }):t()
            wide = tide.tensor(values(3, 5000, 8), { dtype = dt })
        end)
        local CASES = {
            add_broadcast = function(x, c) return x + c end,
            mul_strided = function(x, _, t) return x * t end,
            sub_scalar = function(x) return 1.5 - x end,
            gelu = function(x) return F.gelu(x) end,
            exp_strided = function(_, _, t) return t:exp() end,
            clamp = function(x) return x:clamp(-0.5, 0.7) end,
            softmax = function(x) return F.softmax(x, 2) end,
            softmax_strided_dim = function(_, _, t) return F.log_softmax(t, 1) end,
        }
        for name, f in pairs(CASES) do
            it(name .. ": the float32 result rounded once", function()
                same_bits(f(big:float(), col:float(), tr:float()):to(dt), f(big, col, tr), name)
            end)
        end
        it("softmax and log_softmax over every dim of a 3-d tensor, rounded once", function()
            local t = tide.tensor(values(60, 500, 11), { dtype = dt }):mul(3):view(6, 10, 500)
            for d = 1, 3 do
                same_bits(F.softmax(t:float(), d):to(dt), F.softmax(t, d), "softmax " .. d)
                same_bits(F.log_softmax(t:float(), d):to(dt), F.log_softmax(t, d),
                    "log_softmax " .. d)
            end
        end)

        it("softmax over rows longer than a block, and its gradient", function()
            same_bits(F.softmax(wide:float(), 2):to(dt), F.softmax(wide, 2), "long rows")
            local x = big:clone():requires_grad_()
            local xf = big:float():requires_grad_()
            local g = tide.tensor(values(90, 301, 9), { dtype = dt })
            F.log_softmax(x, 2):backward(g)
            -- the float32 gradient of the rounded result, rounded once
            local yf = F.log_softmax(xf, 2):to(dt):float()
            local want = (g:float() - yf:exp() * g:float():sum(2, true)):to(dt)
            assert.are.equal(dt, x.grad.dtype)
            local err = (x.grad:float() - want:float()):abs():max():item()
            assert.is_true(err <= 2 ^ -6, "log_softmax gradient off by " .. err)
        end)
        it("in place over itself reads the old values", function()
            local x = big:clone()
            x:mul_(x)
            same_bits((big:float() * big:float()):to(dt), x, "x:mul_(x)")
            local y = big:clone()
            y:add_(y:flip(2))
            same_bits((big:float() + big:float():flip(2)):to(dt), y, "x:add_(x:flip(2))")
        end)
    end)
end

-- A bfloat16 product is the one op that does not widen where oneDNN multiplies bfloat16 in
-- hardware (src/cpu/matmul_dnnl.c, tide.cpu_info().bf16_gemm): exact products, float32 sums in
-- oneDNN's order, one rounding. So each element is the widened result but for summation order:
-- within a bfloat16 rounding of it, plus float32's sum error over |a| @ |b|. Every layout
-- matmul hands the kernel is checked, those oneDNN declines (widened instead) among them; the
-- sanitizer build, which has no oneDNN, runs the same cases through the widened path.
describe("bfloat16 matmul on the CPU", function()
    local function near_widened(x, y, what)
        local got = x:matmul(y)
        local want = x:float():matmul(y:float())
        assert.are.equal("bfloat16", got.dtype, what)
        assert.are.same(want.shape, got.shape, what)
        local scale = x:float():abs():matmul(y:float():abs())
        local err = (got:float() - want):abs()
        local bound = want:abs() * 2 ^ -8 + scale * 2 ^ -20
        assert.is_true(err:le(bound):all():item(), what .. ": off the widened product by "
            .. (err - bound):max():item())
        return got
    end
    local function m(r, c, seed)
        return tide.tensor(values(r, c, seed), { dtype = "bfloat16" })
    end

    it("names what multiplies it: oneDNN's kernel, or nothing where it widens", function()
        local name = tide.cpu_info().bf16_gemm
        assert.is_true(name == nil or name:match("^oneDNN %S+$") ~= nil, tostring(name))
    end)

    it("gives the widened product, but for summation order, on every layout", function()
        local a, b = m(33, 300, 1), m(300, 17, 2)
        near_widened(a, b, "row-major")
        near_widened(m(300, 33, 3):t(), b, "a transposed (column-major)")
        near_widened(a, m(17, 300, 4):t(), "b transposed")
        near_widened(m(33, 320, 5):narrow(2, 11, 300), b, "a with a leading dim past its width")
        local flat = tide.tensor(values(1, 2 * 33 * 300, 6)[1], { dtype = "bfloat16" })
        near_widened(flat:as_strided({ 33, 300 }, { 600, 2 }), b, "no BLAS layout (widened)")
        near_widened(tide.stack({ a, a * 2, -a }), tide.stack({ b, b:flip(1), b * 0.5 }),
            "a batch of products")
        near_widened(tide.stack({ a, a * 2 }), b, "a batch against one matrix")
        near_widened(a, tide.stack({ b, b * 3 }), "one matrix against a batch (stride 0)")
        local at = tide.stack({ a, -a }):transpose(2, 3):contiguous():transpose(2, 3)
        near_widened(at, m(300, 20, 9):narrow(2, 2, 17):expand(2, 300, 17),
            "column-major batches against one narrowed matrix, expanded")
        near_widened(a[1], b, "a vector times a matrix")
        near_widened(a, b:select(2, 1), "a matrix times a vector")
        near_widened(a[1], b:select(2, 3), "a dot product")
    end)

    it("is exact where float32 sums are: small integers", function()
        local a = tide.arange(0, 60):remainder(7):reshape(6, 10):to("bfloat16")
        local b = tide.arange(0, 40):remainder(5):reshape(10, 4):to("bfloat16")
        same_bits(a:long():matmul(b:long()):to("bfloat16"), a:matmul(b), "integers")
    end)

    it("fills an empty inner dim with zeros and keeps empty shapes", function()
        local z = m(3, 1, 1):narrow(2, 1, 0):matmul(m(1, 4, 2):narrow(1, 1, 0))
        same_bits(tide.zeros({ 3, 4 }, { dtype = "bfloat16" }), z, "K = 0")
        assert.are.same({ 0, 4 }, m(1, 5, 1):narrow(1, 1, 0):matmul(m(5, 4, 2)).shape)
    end)

    it("convolves as the widened im2col path, with the gradients, to bfloat16 precision",
        function()
            -- oneDNN's bfloat16 convolution where the CPU has the instructions, else im2col and
            -- the widened gemm: the float32 convolution's values, to bfloat16 rounding
            local function close(got, want, what)
                assert.are.equal("bfloat16", got.dtype, what)
                local err = (got:float() - want):abs():max():item()
                local tol = 2 ^ -7 * want:abs():max():item()
                assert.is_true(err <= tol, what .. ": off by " .. err .. " (tolerance " .. tol .. ")")
            end
            for _, c in ipairs({ { 3, 8, {}, true }, { 4, 6, { stride = 2, padding = 1 }, true },
                { 4, 6, { groups = 2, dilation = 2, padding = 2 }, false } }) do
                local cin, cout, opts, with_bias = c[1], c[2], c[3], c[4]
                local x = tide.tensor(values(2 * cin * 9, 11, 3), { dtype = "bfloat16" })
                    :view(2, cin, 9, 11):requires_grad_()
                local groups = opts.groups or 1
                local w = tide.tensor(values(cout, cin / groups * 9, 4), { dtype = "bfloat16" })
                    :view(cout, cin / groups, 3, 3):requires_grad_()
                local b = with_bias and m(1, cout, 5):view(cout):requires_grad_() or nil
                local y = F.conv2d(x, w, b, opts)
                local xf, wf = x:detach():float():requires_grad_(), w:detach():float():requires_grad_()
                local bf = b and b:detach():float():requires_grad_()
                local yf = F.conv2d(xf, wf, bf, opts)
                close(y, yf, "conv2d")
                local g = tide.tensor(values(y:numel(), 1, 6), { dtype = "bfloat16" }):view(y.shape)
                y:backward(g)
                yf:backward(g:float())
                close(x.grad, xf.grad, "grad of x")
                close(w.grad, wf.grad, "grad of w")
                if b then
                    close(b.grad, bf.grad, "grad of b")
                end
            end
        end)

    it("carries gradients: those of the widened product, to bfloat16 precision", function()
        local a = m(20, 64, 7):requires_grad_()
        local b = m(64, 9, 8):requires_grad_()
        local g = m(20, 9, 9)
        a:matmul(b):backward(g)
        local fa, fb = a:detach():float(), b:detach():float()
        local ga, gb = g:float():matmul(fb:t()), fa:t():matmul(g:float())
        for _, c in ipairs({ { a.grad, ga, "a.grad" }, { b.grad, gb, "b.grad" } }) do
            assert.are.equal("bfloat16", c[1].dtype)
            local err = (c[1]:float() - c[2]):abs():max():item()
            assert.is_true(err <= 2 ^ -7 * c[2]:abs():max():item(), c[3] .. " " .. err)
        end
    end)
end)
