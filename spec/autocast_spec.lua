-- tide.autocast / tide.amp.autocast: PyTorch's autocast. Values against PyTorch 1.13's CPU
-- autocast in bfloat16 (spec/fixtures/make_autocast.py), the dtypes of PyTorch's op lists,
-- the gradients that come back to float32 parameters, the state's restoration, and the errors.
local tide = require("tide")
local nn, F = tide.nn, tide.nn.functional
local ref = require("spec.fixtures.autocast_torch")
local D = require("spec.support.device")

local function t(v)
    return tide.tensor(v, { dtype = "float32" })
end

-- |a - b| <= tol * max |b| elementwise, a a tide tensor and b a nested list: half precision
-- sums round at the scale of their largest terms, so a small result may cancel to anything
-- within a few of their ulps (PyTorch's fused addmm also rounds once where tide rounds the
-- product and then the bias sum)
local function close(a, b, tol)
    local r = tide.tensor(b, { dtype = "float64" })
    local worst = a:double():sub(r):abs():max():item()
    local bound = tol * r:abs():max():item()
    assert(worst <= bound, ("off by %g, beyond %g"):format(worst, bound))
end

-- the gradient weight of porting_common: 1, -2, 3, -4, ... over y's elements
local function weight_like(y)
    local n, g = y:numel(), {}
    for i = 1, n do
        g[i] = i * (i % 2 == 1 and 1 or -1)
    end
    return tide.tensor(g, { dtype = "float32" }):view(y.shape)
end

describe("autocast against PyTorch (CPU, bfloat16)", function()
    it("runs an MLP's linear layers in bfloat16 and its gradients back to float32", function()
        local c = ref.mlp
        local ps = { t(c.w1), t(c.b1), t(c.w2), t(c.b2) }
        for _, p in ipairs(ps) do
            p:requires_grad_(true)
        end
        local y = tide.autocast("cpu", function()
            local h = F.linear(t(c.x), ps[1], ps[2]):relu()
            return F.linear(h, ps[3], ps[4])
        end)
        assert.are.equal(c.y_dtype, y.dtype)
        close(y, c.y, 1 / 64) -- bfloat16 keeps 8 bits: 2 ulps of the largest
        y:float():mul(weight_like(y)):sum():backward()
        for i, p in ipairs(ps) do
            assert.are.equal("float32", p.grad.dtype)
            close(p.grad, c.grads[i], 1 / 32)
        end
    end)

    it("runs conv2d in bfloat16", function()
        local c = ref.conv
        local w, b = t(c.w):requires_grad_(true), t(c.b):requires_grad_(true)
        local y = tide.autocast("cpu", function()
            return F.conv2d(t(c.x), w, b, { padding = 1 })
        end)
        assert.are.equal(c.y_dtype, y.dtype)
        close(y, c.y, 1 / 64)
        y:float():mul(weight_like(y)):sum():backward()
        close(w.grad, c.grads[1], 1 / 32)
        close(b.grad, c.grads[2], 1 / 32)
    end)

    it("computes mse_loss in float32 from bfloat16 products", function()
        local c = ref.loss
        local w = t(c.w):requires_grad_(true)
        local loss = tide.autocast("cpu", function()
            return F.mse_loss(t(c.x):matmul(w), t(c.t))
        end)
        assert.are.equal(c.loss_dtype, loss.dtype)
        assert.is_true(math.abs(loss:item() - c.loss) <= 1e-2 * (1 + math.abs(c.loss)))
        loss:backward()
        close(w.grad, c.grad, 1 / 32)
    end)
end)

describe("autocast's op lists", function()
    local x, w
    before_each(function()
        tide.manual_seed(3)
        x, w = tide.randn({ 4, 6 }), tide.randn({ 6, 6 })
    end)

    -- PyTorch's CUDA lists, which tide follows on every device type
    it("casts matrix products down, the float32 list up, and leaves the rest to follow", function()
        local got = tide.autocast("cpu", { dtype = "float16" }, function()
            local h = x:matmul(w)
            return {
                matmul = h.dtype,
                mm = tide.mm(x, w).dtype,
                linear = F.linear(x, w).dtype,
                relu = h:relu().dtype,
                tanh = h:tanh().dtype,
                add = (h + h).dtype,
                add_float32 = (h + x:matmul(w):float()).dtype, -- promotion, as PyTorch's
                exp = h:exp().dtype,
                log_softmax = h:log_softmax(2).dtype,
                softmax = h:softmax(2).dtype,
                sum = h:sum().dtype,
                mean = h:mean().dtype, -- not in PyTorch's float32 list
                pow = h:pow(2).dtype,
                cumsum = h:cumsum(1).dtype,
                logsumexp = h:logsumexp(2).dtype,
                norm = h:norm().dtype,
                layer_norm = F.layer_norm(h, { 6 }).dtype,
                cross_entropy = F.cross_entropy(h, tide.tensor({ 1, 2, 3, 4 })).dtype,
                mse_loss = F.mse_loss(h, x).dtype,
                float64 = x:double():matmul(w:double()).dtype,
                int = tide.tensor({ { 1, 2 } }):matmul(tide.tensor({ { 3 }, { 4 } })).dtype,
            }
        end)
        assert.are.same({
            matmul = "float16", mm = "float16", linear = "float16", relu = "float16",
            tanh = "float16", add = "float16", add_float32 = "float32", exp = "float32",
            log_softmax = "float32", softmax = "float32", sum = "float32", mean = "float16",
            pow = "float32", cumsum = "float32", logsumexp = "float32", norm = "float32",
            layer_norm = "float32", cross_entropy = "float32", mse_loss = "float32",
            float64 = "float64", int = "int64",
        }, got)
    end)

    it("computes the op table's autocast_fp32 rows in float32, the other float rows in half",
        function()
            local x = tide.rand({ 2, 3 }, { dtype = "bfloat16" }):add(0.25) -- in every domain
            local walked = 0
            for _, row in ipairs(tide.core._ops) do
                local unary = (row.family == "unary" or row.family == "reduce") and
                    not row.integer_only and not row.no_grad
                if unary or row.name == "pow" then
                    local got = tide.autocast("cpu", function()
                        return (row.name == "pow" and x:pow(x) or x[row.name](x)).dtype
                    end)
                    local want = row.autocast_fp32 and "float32" or "bfloat16"
                    assert.are.equal(want, got, row.name)
                    walked = walked + 1
                end
            end
            assert.is_true(walked > 40)
        end)

    it("lets nn layers take float32 inputs over float32 weights and return half results", function()
        tide.manual_seed(1)
        local model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(),
            nn.Linear(8, 3), nn.LayerNorm(3))
        local y = tide.autocast("cpu", function()
            return model(tide.randn({ 2, 1, 4, 4 }))
        end)
        assert.are.equal("float32", y.dtype) -- LayerNorm: float32 list
        local inner = tide.autocast("cpu", function()
            return model[4](model[3](model[2](model[1](tide.randn({ 2, 1, 4, 4 })))))
        end)
        assert.are.equal("bfloat16", inner.dtype)
        y:sum():backward()
        for _, p in ipairs(model:parameters()) do
            assert.are.equal("float32", p.dtype)
            assert.are.equal("float32", p.grad.dtype)
        end
    end)

    it("runs binary_cross_entropy in float32 in a cpu region (PyTorch's CPU list)", function()
        local p = tide.tensor({ 0.25, 0.5 }, { dtype = "bfloat16" })
        local loss = tide.autocast("cpu", function()
            return F.binary_cross_entropy(p, tide.tensor({ 0.0, 1.0 }))
        end)
        assert.are.equal("float32", loss.dtype)
        assert.is_true(math.abs(loss:item() - (math.log(4 / 3) + math.log(2)) / 2) < 1e-6)
    end)

    it("casts a parameter again after an in-place update inside the region", function()
        local p = tide.ones({ 2, 2 }, { requires_grad = true })
        local a, b = tide.autocast("cpu", function()
            local before = tide.ones({ 1, 2 }):matmul(p)
            tide.no_grad(function()
                p:mul_(3) -- an optimizer step
            end)
            return before, tide.ones({ 1, 2 }):matmul(p)
        end)
        assert.are.same({ { 2, 2 } }, a:float():totable())
        assert.are.same({ { 6, 6 } }, b:float():totable())
    end)

    it("casts a parameter once a region (PyTorch's cache), and again in the next", function()
        local p = tide.randn({ 6, 6 }, { requires_grad = true })
        local to, casts = tide.Tensor.to, 0
        tide.Tensor.to = function(self, ...)
            if rawequal(self, p) then
                casts = casts + 1
            end
            return to(self, ...)
        end
        local ok, err = pcall(function()
            tide.autocast("cpu", function()
                F.linear(x, p)
                F.linear(x, p)
                x:matmul(p)
            end)
            assert.are.equal(1, casts)
            tide.autocast("cpu", { cache_enabled = false }, function()
                F.linear(x, p)
                F.linear(x, p)
            end)
            assert.are.equal(3, casts)
        end)
        tide.Tensor.to = to
        assert(ok, err)
    end)

    -- PyTorch's cached cast (ToCopyBackward) saves nothing, so a backward through one use
    -- leaves the others' graph whole: a training loop, or gradient accumulation, inside one
    -- region; two forwards in a region, then a backward of each
    it("backs up through a cached parameter cast more than once", function()
        local p = tide.ones({ 2, 2 }, { requires_grad = true })
        local xs = tide.ones({ 1, 2 })
        tide.autocast("cpu", function()
            for _ = 1, 3 do
                F.linear(xs, p):float():sum():backward()
                xs:matmul(p):float():sum():backward()
            end
        end)
        assert.are.same({ { 6, 6 }, { 6, 6 } }, p.grad:totable())
        p.grad = nil
        local a, b = tide.autocast("cpu", function()
            return F.linear(xs, p), F.linear(xs * 2, p)
        end)
        a:float():sum():backward()
        b:float():sum():backward()
        assert.are.same({ { 3, 3 }, { 3, 3 } }, p.grad:totable())
    end)
end)

describe("autocast's state", function()
    it("is on inside the function only, and restored after an error", function()
        assert.is_false(tide.is_autocast_enabled("cpu"))
        local inside, nested = tide.autocast("cpu", function()
            return tide.is_autocast_enabled("cpu"), tide.autocast("cpu", { enabled = false },
                function()
                    return tide.is_autocast_enabled("cpu"), tide.ones({ 2, 2 }):matmul(
                        tide.ones({ 2, 2 })).dtype
                end)
        end)
        assert.is_true(inside)
        assert.is_false(nested)
        local ok = pcall(tide.autocast, "cpu", function()
            error("boom")
        end)
        assert.is_false(ok)
        assert.is_false(tide.is_autocast_enabled("cpu"))
        assert.are.equal("float32", tide.ones({ 2, 2 }):matmul(tide.ones({ 2, 2 })).dtype)
    end)

    it("returns every result and passes the arguments", function()
        local a, b, c = tide.autocast("cpu", function(u, v)
            return u + v, nil, "x"
        end, 1, 2)
        assert.are.same({ 3, nil, "x" }, { a, b, c })
        assert.are.equal(tide.autocast, tide.amp.autocast)
        -- a nil options table (an optional one passed on) stands for none
        assert.are.same({ true, 5 }, { tide.autocast("cpu", nil, function(u)
            return tide.is_autocast_enabled("cpu"), u
        end, 5) })
    end)

    it("knows each device type's default dtype and covers only its own type", function()
        assert.are.equal("float16", tide.get_autocast_dtype("cuda"))
        assert.are.equal("bfloat16", tide.get_autocast_dtype("cpu"))
        assert.is_false(tide.is_autocast_enabled()) -- "cuda", as PyTorch's
        local dt = tide.autocast("cuda", function()
            assert.is_true(tide.is_autocast_enabled())
            assert.are.equal("float16", tide.get_autocast_dtype("cuda"))
            return tide.ones({ 2, 2 }):matmul(tide.ones({ 2, 2 })).dtype
        end)
        assert.are.equal("float32", dt) -- CPU tensors are not in a "cuda" region
    end)

    it("runs backward in the forward's dtypes, even inside the region", function()
        local w = tide.randn({ 3, 3 }, { requires_grad = true })
        tide.autocast("cpu", function()
            local y = tide.ones({ 2, 3 }):matmul(w)
            y:float():sum():backward()
        end)
        assert.are.equal("float32", w.grad.dtype)
        assert.is_true(w.grad:equal(tide.full({ 3, 3 }, 2)))
    end)

    it("recomputes a checkpoint under the forward's regions", function()
        local w = tide.randn({ 4, 4 }, { requires_grad = true })
        local x = tide.randn({ 2, 4 })
        local y = tide.autocast("cpu", function()
            return tide.utils.checkpoint(function(u)
                return u:matmul(w):relu()
            end, x)
        end)
        y:float():sum():backward()
        local plain = w:detach():requires_grad_(true)
        tide.autocast("cpu", function()
            return x:matmul(plain):relu()
        end):float():sum():backward()
        assert.is_true(w.grad:equal(plain.grad))
    end)
end)

describe("autocast on the device under test", function()
    it("covers the device's type: products down, softmax up, gradients back", function()
        local w = tide.randn({ 4, 4 }, { device = D.name, requires_grad = true })
        local x = tide.randn({ 3, 4 }, { device = D.name })
        local half = D.kind == "cuda" and "float16" or "bfloat16"
        local y, p = tide.autocast(D.kind, function()
            local h = F.linear(x, w)
            return h, h:softmax(2)
        end)
        assert.are.equal(half, y.dtype)
        assert.are.equal("float32", p.dtype)
        assert.are.equal(D.name, tostring(y.device))
        y:float():sum():backward()
        assert.are.equal("float32", w.grad.dtype)
        assert.are.equal(D.name, tostring(w.grad.device))
        -- the other device type's region leaves these tensors alone
        local other = D.kind == "cuda" and "cpu" or "cuda"
        assert.are.equal("float32", tide.autocast(other, function()
            return x:matmul(w).dtype
        end))
    end)

    it("refuses binary_cross_entropy in a cuda region only", function()
        local p = tide.tensor({ 0.25, 0.5 }, { device = D.name })
        local t = tide.tensor({ 0.0, 1.0 }, { device = D.name })
        local ok, err = pcall(tide.autocast, D.kind, function()
            return F.binary_cross_entropy(p, t)
        end)
        if D.kind == "cuda" then
            assert.is_false(ok)
            assert.are.equal("tide: binary_cross_entropy: unsafe under autocast (the log of " ..
                "half-precision probabilities loses too much); use " ..
                "binary_cross_entropy_with_logits (nn.BCEWithLogitsLoss) on the logits, or " ..
                "compute the loss outside the autocast region", tostring(err):match("tide:.*"))
        else
            assert.is_true(ok, err)
            assert.are.equal("float32", err.dtype)
        end
    end)
end)

describe("autocast's errors", function()
    local function message(fn, ...)
        local ok, err = pcall(fn, ...)
        assert.is_false(ok)
        return tostring(err):match("tide:.*")
    end

    it("names the device type, the dtype, the options and the function", function()
        local f = function() end
        assert.are.equal('tide: autocast: device_type must be "cuda" or "cpu", got "cuda:0"; ' ..
            'autocast covers every device of a type: pass "cuda"',
            message(tide.autocast, "cuda:0", f))
        assert.are.equal('tide: autocast: device_type must be "cuda" or "cpu", got "tpu"',
            message(tide.autocast, "tpu", f))
        assert.are.equal('tide: autocast: dtype must be "float16" or "bfloat16" (the precision ' ..
            'the matrix products run in), got "float32"',
            message(tide.autocast, "cpu", { dtype = "float32" }, f))
        assert.are.equal('tide: autocast: unknown option "foo"; options are dtype, enabled, ' ..
            'cache_enabled', message(tide.autocast, "cpu", { foo = 1 }, f))
        assert.are.equal("tide: autocast: enabled must be a boolean, got number",
            message(tide.autocast, "cpu", { enabled = 1 }, f))
        assert.are.equal('tide: autocast: expected a function to run under autocast, got ' ..
            'number; write tide.autocast("cpu", function() ... end)',
            message(tide.autocast, "cpu", 3))
        assert.are.equal('tide: get_autocast_dtype: device_type must be "cuda" or "cpu", got ' ..
            'nil', message(tide.get_autocast_dtype))
    end)
end)
