-- amp_values_spec.lua — tide.autocast / tide.amp.GradScaler's names and values against PyTorch
-- 1.13 (values printed by a throwaway script under /tmp/amp_values/, pasted here): the dtypes
-- of ops in a "cpu" region (float32 inputs and bfloat16 inputs), promotion, gradients, the
-- state functions inside nested regions, and GradScaler's attributes, getters, state dict and a
-- six-step run with an inf and a NaN (PyTorch's CUDA kernels' rules, run on CPU).
local tide = require("tide")
local F = tide.nn.functional

-- PyTorch 1.13, torch.autocast("cpu") over float32 inputs: the result's dtype
local CPU_F32 = {
    matmul = "bfloat16", mm = "bfloat16", bmm = "bfloat16", baddbmm = "bfloat16",
    addmm = "bfloat16", addbmm = "bfloat16", linear = "bfloat16", conv1d = "bfloat16",
    conv2d = "bfloat16", conv_transpose2d = "float32", prelu = "float32", softmax = "float32",
    log_softmax = "float32", layer_norm = "float32", group_norm = "float32",
    mse_loss = "float32", l1_loss = "float32", cross_entropy = "float32", nll_loss = "float32",
    kl_div = "float32", bce_with_logits = "float32", exp = "float32", log = "float32",
    pow = "float32", sum = "float32", prod = "float32", cumsum = "float32", relu = "float32",
    add = "float32",
}
-- the same over bfloat16 inputs (float32: PyTorch's CPU float32 list; bfloat16: passed through)
local CPU_BF16 = {
    softmax = "bfloat16", log_softmax = "bfloat16", layer_norm = "bfloat16",
    group_norm = "bfloat16", mse_loss = "float32", l1_loss = "float32",
    cross_entropy = "float32", nll_loss = "float32", kl_div = "float32",
    bce_with_logits = "float32", exp = "bfloat16", log = "bfloat16", pow = "bfloat16",
    sum = "bfloat16", prod = "float32", cumsum = "bfloat16", relu = "bfloat16",
    add = "bfloat16",
}
-- tide's "cpu" region follows PyTorch's CUDA lists (docs/API.md, Mixed precision): these
-- differ from PyTorch 1.13's CPU lists on purpose
local CUDA_LISTS = {
    ["f32.conv_transpose2d"] = "bfloat16",
    ["bf16.softmax"] = "float32", ["bf16.log_softmax"] = "float32",
    ["bf16.layer_norm"] = "float32", ["bf16.group_norm"] = "float32", ["bf16.exp"] = "float32",
    ["bf16.log"] = "float32", ["bf16.pow"] = "float32", ["bf16.sum"] = "float32",
    ["bf16.cumsum"] = "float32",
}

local function ops(dtype)
    local g = tide.Generator():manual_seed(0)
    local function r(...)
        return tide.randn({ ... }, { generator = g, dtype = "float32" }):to(dtype)
    end
    local x, w, b = r(2, 3), r(4, 3), r(4)
    local a3, b3, m22, c3 = r(2, 2, 3), r(2, 3, 2), r(2, 2), r(2, 2, 2)
    local img, k2, seq, k1 = r(1, 2, 5, 5), r(3, 2, 3, 3), r(1, 2, 5), r(3, 2, 3)
    local tgt = tide.tensor({ 1, 3 }, { dtype = "int64" })
    return {
        matmul = function() return tide.matmul(x, w:t()) end,
        mm = function() return tide.mm(x, w:t()) end,
        bmm = function() return tide.bmm(a3, b3) end,
        baddbmm = function() return tide.baddbmm(c3, a3, b3) end,
        addmm = function() return tide.addmm(b, x, w:t()) end,
        addbmm = function() return tide.addbmm(m22, a3, b3) end,
        linear = function() return F.linear(x, w, b) end,
        conv1d = function() return F.conv1d(seq, k1) end,
        conv2d = function() return F.conv2d(img, k2) end,
        conv_transpose2d = function()
            return F.conv_transpose2d(img, k2:transpose(1, 2):contiguous())
        end,
        prelu = function() return F.prelu(x, tide.tensor({ 0.25 }, { dtype = "float32" })) end,
        softmax = function() return F.softmax(x, 2) end,
        log_softmax = function() return F.log_softmax(x, 2) end,
        layer_norm = function() return F.layer_norm(x, { 3 }) end,
        group_norm = function() return F.group_norm(img, 2) end,
        mse_loss = function() return F.mse_loss(x, x * 0.5) end,
        l1_loss = function() return F.l1_loss(x, x * 0.5) end,
        cross_entropy = function() return F.cross_entropy(x, tgt) end,
        nll_loss = function() return F.nll_loss(x, tgt) end,
        kl_div = function()
            return F.kl_div(x, x:softmax(2), { reduction = "batchmean" })
        end,
        bce_with_logits = function()
            return F.binary_cross_entropy_with_logits(x, (x * 0):add(0.5))
        end,
        exp = function() return tide.exp(x) end,
        log = function() return tide.log(x:abs()) end,
        pow = function() return tide.pow(x, 2) end,
        sum = function() return tide.sum(x) end,
        prod = function() return tide.prod(x) end,
        cumsum = function() return tide.cumsum(x, 2) end,
        relu = function() return tide.relu(x) end,
        add = function() return x + 1 end,
    }
end

local function in_cpu_region(fn)
    return tide.autocast("cpu", fn)
end

describe("autocast values against PyTorch 1.13's CPU autocast", function()
    it("gives PyTorch's result dtypes, float32 and bfloat16 inputs", function()
        local pend = {}
        for tag, ref in pairs({ f32 = { "float32", CPU_F32 }, bf16 = { "bfloat16", CPU_BF16 } }) do
            local fns = ops(ref[1])
            for name, want in pairs(ref[2]) do
                local got = in_cpu_region(fns[name]).dtype
                local key = tag .. "." .. name
                if CUDA_LISTS[key] then
                    assert.are.equal(CUDA_LISTS[key], got, key .. " (tide's CUDA lists)")
                    pend[#pend + 1] = key
                else
                    assert.are.equal(want, got, key)
                end
            end
        end
        assert.are.equal(10, #pend)
    end)
    pending("PyTorch 1.13's CPU lists keep conv_transpose in float32 and softmax, " ..
        "log_softmax, layer_norm, group_norm, exp, log, pow, sum, cumsum in the input's dtype; " ..
        "tide's cpu region follows the CUDA lists (documented, so a model behaves alike)")

    it("promotes, keeps float64 and bfloat16, and gives float32 gradients", function()
        local x = tide.randn({ 2, 3 }, { dtype = "float32" })
        local w = tide.randn({ 4, 3 }, { dtype = "float32" })
        in_cpu_region(function()
            local y = tide.matmul(x, w:t())
            assert.are.equal("bfloat16", y.dtype)
            local z = tide.randn({ 2, 4 }, { dtype = "float32" })
            assert.are.equal("float32", (y + z).dtype, "add_bf16_f32")
            assert.are.equal("float32", tide.cat({ y, z }).dtype, "cat_bf16_f32")
            assert.are.equal("float32", tide.stack({ y, z }).dtype, "stack_bf16_f32")
            assert.are.equal("float64", tide.matmul(x:double(), w:t():double()).dtype)
            assert.are.equal("bfloat16", tide.mm(x:to("bfloat16"), w:t():to("bfloat16")).dtype)
        end)
        local lin = tide.nn.Linear(3, 4)
        local o = in_cpu_region(function() return lin(x) end)
        assert.are.equal("bfloat16", o.dtype)
        o:float():sum():backward()
        assert.are.equal("float32", lin.weight.grad.dtype)
        assert.are.equal("float32", lin.bias.grad.dtype)
    end)

    it("reports PyTorch's state inside nested regions and after", function()
        local amp = tide.amp
        local function state()
            return { amp.is_autocast_cpu_enabled(), amp.is_autocast_enabled(),
                amp.is_autocast_cache_enabled() }
        end
        local x = tide.ones({ 2, 3 }, { dtype = "float32" })
        local w = tide.ones({ 3, 4 }, { dtype = "float32" })
        assert.are.same({ false, false, true }, state())
        assert.are.equal("bfloat16", amp.get_autocast_cpu_dtype())
        assert.are.equal("float16", amp.get_autocast_gpu_dtype())
        assert.are.equal(tide.is_autocast_cpu_enabled, amp.is_autocast_cpu_enabled)
        tide.autocast("cpu", { cache_enabled = false }, function()
            assert.are.same({ true, false, false }, state(), "inside")
            tide.autocast("cpu", { enabled = false }, function()
                assert.are.same({ false, false, false }, state(), "nested off")
                assert.are.equal("float32", tide.matmul(x, w).dtype, "nested off")
            end)
            assert.are.same({ true, false, false }, state(), "after nested")
            assert.are.equal("bfloat16", tide.matmul(x, w).dtype, "after nested")
            amp.clear_autocast_cache()
            assert.are.equal("bfloat16", tide.matmul(x, w).dtype, "after clear_autocast_cache")
        end)
        assert.are.same({ false, false, true }, state(), "after")
        tide.autocast("cpu", { dtype = tide.bfloat16 }, function()
            assert.are.equal("bfloat16", amp.get_autocast_cpu_dtype())
        end)
        tide.autocast("cpu", { enabled = false }, function()
            assert.are.same({ false, false, true }, state(), "disabled")
            assert.are.equal("float32", tide.matmul(x, w).dtype, "disabled")
        end)
        amp.clear_autocast_cache() -- outside a region: nothing, as torch.clear_autocast_cache()
    end)
    pending("torch.autocast(\"cpu\", dtype=torch.float16) raises in 1.13 ('Currently, " ..
        "AutocastCPU only support Bfloat16 as the autocast_cpu_dtype'); tide runs float16 " ..
        "on cpu (documented dtype option, PyTorch 2.x allows it)")
    pending("torch.autocast is an object (.device, .fast_dtype, ._enabled, ._cache_enabled, " ..
        "__enter__/__exit__); tide.autocast is tide.no_grad's function form")
    pending("torch.set_autocast_enabled / set_autocast_cpu_enabled / set_autocast_cpu_dtype / " ..
        "set_autocast_gpu_dtype / set_autocast_cache_enabled / autocast_increment_nesting / " ..
        "autocast_decrement_nesting and torch.cuda.amp.custom_fwd / custom_bwd: not in tide " ..
        "(regions are scoped functions); tide.clear_autocast_cache needs _lazy_ops.lua's list")
end)

-- PyTorch 1.13's torch.cuda.amp.GradScaler (enabled on a CPU-only host by hand)
local REF = {
    attr = { _init_scale = 65536.0, _growth_factor = 2.0, _backoff_factor = 0.5,
        _growth_interval = 2000, _init_growth_tracker = 0 },
    default_sd = { scale = 65536.0, growth_factor = 2.0, backoff_factor = 0.5,
        growth_interval = 2000, _growth_tracker = 0 },
    -- init_scale = 8, growth_factor = 3, backoff_factor = 0.25, growth_interval = 2; SGD lr 0.5
    -- on p = {1, -2}, loss = sum(p * g) * scale: {scaled loss, unscaled grad, p, scale, tracker}
    grads = { { 0.5, 1.0 }, { math.huge, 1.0 }, { 0.25, 0.5 }, { 0.125, -1.0 }, { 0 / 0, 0.0 },
        { 1.0, 1.0 } },
    run = {
        { -12.0, { 0.5, 1.0 }, { 0.75, -2.5 }, 8.0, 1 },
        { "inf", { "inf", 1.0 }, { 0.75, -2.5 }, 2.0, 0 },
        { -2.125, { 0.25, 0.5 }, { 0.625, -2.75 }, 2.0, 1 },
        { 5.65625, { 0.125, -1.0 }, { 0.5625, -2.25 }, 6.0, 0 },
        { "nan", { "nan", 0.0 }, { 0.5625, -2.25 }, 1.5, 0 },
        { -2.53125, { 1.0, 1.0 }, { 0.0625, -2.75 }, 1.5, 1 },
    },
    run_sd = { scale = 1.5, growth_factor = 3.0, backoff_factor = 0.25, growth_interval = 2,
        _growth_tracker = 1 },
    loaded_sd = { scale = 5.0, growth_factor = 4.0, backoff_factor = 0.125,
        growth_interval = 3, _growth_tracker = 2 },
    loaded_attr = { _init_scale = 5.0, _growth_factor = 4.0, _backoff_factor = 0.125,
        _growth_interval = 3, _init_growth_tracker = 2 },
    set_sd = { scale = 5.0, growth_factor = 5.0, backoff_factor = 0.2, growth_interval = 7,
        _growth_tracker = 2 },
}

local function shown(v)
    if type(v) == "number" and v ~= v then
        return "nan"
    elseif v == math.huge then
        return "inf"
    end
    return v
end

describe("GradScaler values against PyTorch 1.13", function()
    it("has PyTorch's attributes, getters and state dict, enabled and disabled", function()
        local s = tide.amp.GradScaler()
        for k, v in pairs(REF.attr) do
            assert.are.equal(v, s[k], k)
        end
        assert.is_nil(s._scale)
        assert.is_nil(s._growth_tracker)
        assert.are.equal(65536.0, s:get_scale())
        assert.are.equal(2.0, s:get_growth_factor())
        assert.are.equal(0.5, s:get_backoff_factor())
        assert.are.equal(2000, s:get_growth_interval())
        assert.are.equal(0, s:_get_growth_tracker())
        assert.are.same(REF.default_sd, s:state_dict())
        if math.type then -- PyTorch's kinds: float scale and factors, int interval and tracker
            local sd = s:state_dict()
            for k, kind in pairs({ scale = "float", growth_factor = "float",
                backoff_factor = "float", growth_interval = "integer",
                _growth_tracker = "integer" }) do
                assert.are.equal(kind, math.type(sd[k]), k)
            end
        end
        local d = tide.amp.GradScaler({ enabled = false })
        assert.are.equal(1.0, d:get_scale())
        assert.are.same({}, d:state_dict())
        assert.are.equal(0, d:_get_growth_tracker())
        assert.is_false(d:is_enabled())
        local t = tide.tensor({ 3 }, { dtype = "float32" })
        assert.are.equal(t, d:scale(t))
    end)

    it("runs PyTorch's six steps: unscale_ (twice raises), skip at inf/nan, update", function()
        local s = tide.amp.GradScaler({ init_scale = 8.0, growth_factor = 3.0,
            backoff_factor = 0.25, growth_interval = 2 })
        local p = tide.tensor({ 1, -2 }, { dtype = "float32" }):requires_grad_()
        local opt = tide.optim.SGD({ p }, { lr = 0.5 })
        for i, want in ipairs(REF.run) do
            opt:zero_grad()
            local loss = s:scale((p * tide.tensor(REF.grads[i], { dtype = "float32" })):sum())
            assert.are.equal(want[1], shown(loss:item()), i .. ": scaled loss")
            loss:backward()
            s:unscale_(opt)
            local g = p.grad:tolist()
            assert.are.same(want[2], { shown(g[1]), shown(g[2]) }, i .. ": grad")
            local ok, err = pcall(s.unscale_, s, opt)
            assert.is_false(ok)
            assert.matches("unscale_() has already been called on this optimizer since the " ..
                "last update()", err, 1, true)
            assert.is_nil(s:step(opt), i .. ": step's result")
            s:update()
            assert.are.same(want[3], p:tolist(), i .. ": p")
            assert.are.equal(want[4], s:get_scale(), i .. ": scale")
            assert.are.equal(want[5], s:_get_growth_tracker(), i .. ": tracker")
        end
        assert.are.same(REF.run_sd, s:state_dict())
        s:update(100.0)
        assert.are.equal(100.0, s:get_scale())
        s:update(tide.tensor({ 7 }, { dtype = "float32" }))
        assert.are.equal(7.0, s:get_scale())
    end)

    it("loads and sets PyTorch's values", function()
        local s = tide.amp.GradScaler()
        s:load_state_dict(REF.loaded_sd)
        for k, v in pairs(REF.loaded_attr) do
            assert.are.equal(v, s[k], k)
        end
        assert.are.same(REF.loaded_sd, s:state_dict())
        s:set_growth_factor(5.0)
        s:set_backoff_factor(0.2)
        s:set_growth_interval(7)
        assert.are.same(REF.set_sd, s:state_dict())
        -- PyTorch: "The growth factor must be > 1.0." / "The backoff factor must be < 1.0."
        assert.has_error(function() tide.amp.GradScaler({ growth_factor = 1.0 }) end)
        assert.has_error(function() tide.amp.GradScaler({ backoff_factor = 1.0 }) end)
        local ok, err = pcall(function()
            local q = tide.zeros({ 1 }, { dtype = "float32" }):requires_grad_()
            tide.amp.GradScaler():unscale_(tide.optim.SGD({ q }, { lr = 0.1 }))
        end)
        assert.is_false(ok)
        assert.matches("scaler:scale%(loss%)", err)
    end)
    pending("PyTorch 1.13's getters (get_growth_factor, ...) raise AttributeError on a " ..
        "disabled scaler; tide's return the options (kept)")
end)
