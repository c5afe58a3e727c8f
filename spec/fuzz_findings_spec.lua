-- What tools/fuzz_api.lua found (issue 27), one case per class of finding, each failing before
-- its fix: calls that raised a message that was not a `tide:` error (a Lua runtime error from
-- inside the library, or lauxlib's "bad argument" text), calls that hung (a list of views
-- sized by a huge dim) and a call that filled the host's memory (totable of an expanded view).
-- The fuzzer's replayable reproducers were reduced to these calls.
local tide = require("tide")
local nn = tide.nn

-- the message of the error f raises, which must be a tide: error at this file's line
local function tide_error(f, ...)
    local ok, err = pcall(f, ...)
    assert.is_false(ok, "expected an error")
    err = tostring(err)
    assert.matches("^[^\n]-fuzz_findings_spec%.lua:%d+: tide: ", err)
    return err
end

describe("the binding's own argument checks (lauxlib messages before)", function()
    it("name the op, the argument and what was given", function()
        local x = tide.ones(2, 3)
        assert.matches("tide: size: dim must be an integer, got table",
            tide_error(function() return x:size({}) end))
        assert.matches("tide: size: dim must be an integer, got 2.5",
            tide_error(function() return x:size(2.5) end))
        assert.matches("tide: size: dim must be an integer, got a tensor",
            tide_error(function() return x:size(x) end))
        assert.matches("tide: idx_load: path must be a string, got a tensor",
            tide_error(function() return tide.idx_load(x) end))
        assert.matches("tide: safetensors_load: path must be a string, got table",
            tide_error(function() return tide.safetensors_load({}) end))
        assert.matches("tide: isatty: fd must be an integer, got a tensor",
            tide_error(function() return tide.isatty(x) end))
        assert.matches("tide: layer_norm: eps must be a number, got no value",
            tide_error(function() return tide._internal.layer_norm(x, nil, nil, 3) end))
    end)
end)

describe("nn modules", function()
    it("refuse a pair option that is not integers when built (it failed later, in tostring)",
        function()
            assert.matches("tide: MaxPool2d: expected kernel_size to be an integer or {h, w}, got",
                tide_error(function() return nn.MaxPool2d({ strict = 1 }, 1) end))
            assert.matches("tide: Conv2d: expected kernel_size to be an integer or {h, w}, got " ..
                "{3, string}", tide_error(function() return nn.Conv2d(1, 1, { 3, "x" }) end))
        end)

    it("check Flatten's dims when built", function()
        assert.matches("tide: Flatten: expected start_dim to be an integer, got string",
            tide_error(function() return nn.Flatten("x") end))
        assert.matches("tide: Flatten: expected end_dim to be an integer, got table",
            tide_error(function() return nn.Flatten(1, {}) end))
    end)

    it("check cuda(n)'s device index", function()
        local m = nn.ReLU()
        assert.matches("tide: cuda: expected a device index %(an integer >= 0%), got table",
            tide_error(function() return m:cuda({}) end))
    end)
end)

describe("tide.optim", function()
    it("refuses a step closure that is not a function, before any update", function()
        local p = tide.ones({ 2 }, { requires_grad = true })
        p:sum():backward()
        local opt = tide.optim.SGD({ p }, { lr = 0.1 })
        assert.matches("tide: SGD: step: expected a closure function, got tide.Tensor",
            tide_error(function() return opt:step(p) end))
        assert.are.same({ 1, 1 }, p:totable())
    end)

    it("refuses a parameter group that is not a table", function()
        local p = tide.ones({ 2 }, { requires_grad = true })
        assert.matches("tide: SGD: parameter group 2 is a boolean; expected a table such as " ..
            "{params = {...}, lr = 0.1}",
            tide_error(function() return tide.optim.SGD({ { params = { p } }, true }) end))
    end)
end)

describe("tide.autograd", function()
    it("no_grad and enable_grad refuse what is not a function", function()
        assert.matches("tide: no_grad: expected a function, got number",
            tide_error(function() return tide.autograd.no_grad(1) end))
        assert.matches("tide: enable_grad: expected a function, got nil",
            tide_error(function() return tide.autograd.enable_grad(nil) end))
    end)
end)

describe("options of constructors and loaders", function()
    it("LayerNorm checks eps when built (forward compared it with a tensor)", function()
        assert.matches("tide: LayerNorm: expected eps to be a number, got userdata",
            tide_error(function() return nn.LayerNorm(3, tide.ones(2)) end))
    end)

    it("fashion_mnist refuses options that are not a table", function()
        assert.matches("tide: fashion_mnist: options must be a table such as {flatten = true}, " ..
            "got number", tide_error(function() return tide.data.fashion_mnist("/", 3) end))
    end)
end)

describe("more constructor options and lists with holes", function()
    it("BatchNorm checks eps and momentum when built", function()
        assert.matches("tide: BatchNorm1d: expected momentum to be a number, got table",
            tide_error(function() return nn.BatchNorm1d(3, { momentum = {} }) end))
    end)

    it("pad_sequence refuses a list with a hole", function()
        assert.matches("tide: pad_sequence: expected sequence 2 to be a tensor %[L, %*%], got nil",
            tide_error(function()
                return nn.utils.rnn.pad_sequence({ tide.ones(2), nil, tide.ones(3) })
            end))
    end)
end)

describe("DataParallel", function()
    it("refuses a call without a tensor batch", function()
        local dp = nn.DataParallel(nn.Linear(2, 2))
        assert.matches("tide: DataParallel: expected a tensor input %(a batch to split over the " ..
            "devices%), got nil", tide_error(function() return dp() end))
    end)
end)

describe("lists of views sized by a huge dim of an empty or expanded tensor", function()
    it("are refused before they are built (the call hung before)", function()
        local e = tide.zeros({ 0, math.floor(2 ^ 40) })
        assert.matches("tide: unbind: 1099511627776 views of dim 2 would take",
            tide_error(function() return e:unbind(2) end))
        assert.matches("tide: split: 1099511627776 views of dim 2 %(size 1099511627776%) would take",
            tide_error(function() return e:split(1, 2) end))
        local x = tide.ones(1):expand(math.floor(2 ^ 40))
        assert.matches("tide: unbind: 1099511627776 views of dim 1 would take",
            tide_error(function() return x:unbind() end))
        assert.are.equal(3, #tide.zeros(0, 3):unbind(2)) -- small ones as before
    end)

    -- fuzz seed 37015: a sequence of 2^31 empty steps; pad_sequence placed each row in Lua
    it("pad a sequence of many empty steps at once, and refuse to pack it, as PyTorch", function()
        local R = nn.utils.rnn
        local x = tide.zeros(2, 2147483648, 0, 3, { dtype = "uint8" })[2]
        assert.are.same({ 2147483648, 2, 0, 3 }, R.pad_sequence({ x, x }).shape)
        assert.are.same({ 2, 2147483648, 0, 3 }, R.pad_sequence({ x, x }, true).shape)
        assert.are.same({ 5, 2, 0 }, R.pad_sequence({ tide.zeros(3, 0), tide.zeros(5, 0) }).shape)
        assert.matches("tide: pack_padded_sequence: cannot pack an empty tensor %(shape " ..
            "{2147483648, 1, 0, 3}%); a packed sequence needs elements at each step",
            tide_error(function() return R.pack_sequence({ x }) end))
    end)
end)

describe("totable of a view whose values do not fit in Lua tables", function()
    it("raises instead of filling the host's memory (the process was killed before)", function()
        local x = tide.ones(1):expand(math.floor(2 ^ 40))
        assert.matches("tide: totable: 1099511627776 values would take [%d.]+ GB of Lua tables, " ..
            "more than the [%d.]+ GB this process may use; take a part first",
            tide_error(function() return x:totable() end))
        local e = tide.zeros({ math.floor(2 ^ 40), 0 }) -- no value, but 2^40 empty tables
        assert.matches("tide: totable: 0 values would take", tide_error(function() return e:totable() end))
        assert.are.same({ { 1, 1 } }, tide.ones(1, 2):totable()) -- small ones as before
        assert.are.same({}, tide.zeros(0, math.floor(2 ^ 40)):totable())
    end)
end)

describe("Module:load_state_dict", function()
    it("loads float16 parameters (it zeroed them, then failed in add_)", function()
        local m = nn.Linear(2, 2):to("float16")
        local before = m.weight:float():totable()
        local sd = m:state_dict()
        for k, v in pairs(sd) do
            sd[k] = v:clone()
        end
        m:load_state_dict(sd)
        assert.are.same(before, m.weight:float():totable())
        sd.weight = tide.tensor({ { 1, 2 }, { 3, 4 } }) -- another dtype, converted
        m:load_state_dict(sd)
        assert.are.same({ { 1, 2 }, { 3, 4 } }, m.weight:float():totable())
    end)
end)

describe("Conv2d's geometry", function()
    it("is checked when built (a zero stride divided by zero in forward)", function()
        assert.matches("tide: Conv2d: expected stride to be an integer >= 1, got 0",
            tide_error(function() return nn.Conv2d(1, 1, 1, 0) end))
        assert.matches("tide: Conv2d: expected kernel_size to be an integer >= 1, got {3, 0}",
            tide_error(function() return nn.Conv2d(1, 1, { 3, 0 }) end))
        assert.matches("tide: Conv2d: expected padding to be an integer >= 0, got %-1",
            tide_error(function() return nn.Conv2d(1, 1, 1, { padding = -1 }) end))
    end)
end)

describe("pack_padded_sequence of an empty batch", function()
    it("raises a tide: error (it failed inside a for loop before)", function()
        local x = tide.zeros({ 2, 0, 5 })
        local ok, err = pcall(tide.nn.utils.rnn.pack_padded_sequence, x, {})
        assert.is_false(ok)
        assert.matches("tide: pack_padded_sequence: the batch is empty %(0 sequences%); pack at " ..
            "least one sequence", err)
    end)
end)

describe("default_collate of a list whose samples are not all tables", function()
    it("names the sample (it indexed a nil inside a loop before; seed 5007)", function()
        local collate = tide.data.default_collate
        local ok, err = pcall(collate, { { 4, -1, 0 }, "cpu", nil, true, true }, true, 4, 2)
        assert.is_false(ok)
        assert.matches("tide: default_collate: sample 2 is a string, expected a packed sample " ..
            "table like sample 1", err, 1, true)
        ok, err = pcall(collate, { { 1, n = 1 }, nil, { 2, n = 1 } })
        assert.is_false(ok)
        assert.matches("tide: default_collate: sample 2 is nil", err, 1, true)
        local a, b = collate({ { 1, "x", n = 2 }, { 2, "y", n = 2 } })
        assert.are.same({ 1, 2 }, a:totable())
        assert.are.same({ "x", "y" }, b)
    end)
end)

describe("Module:to with a dtype that is not a string", function()
    it("names what it got (it concatenated the tensor into its message before; seed 8102)",
        function()
        local m = nn.Linear(2, 2)
        local w = m.weight
        local ok, err = pcall(function() m:to({ dtype = tide.zeros(4) }) end)
        assert.is_false(ok)
        assert.matches('tide: Module:to: dtype must be a string such as "float32", got a tensor',
            err, 1, true)
        ok, err = pcall(function() m:to("cpu", { dtype = 5 }) end)
        assert.is_false(ok)
        assert.matches("got a number", err, 1, true)
        assert.are.equal(w, m.weight)
        assert.are.equal("float32", m.weight.dtype)
    end)
end)

describe("the three-tensor losses with an argument missing", function()
    it("name it (a loop over the arguments stopped at the nil one; make test's fuzz, seed 1)",
        function()
        local F = tide.nn.functional
        local x = tide.ones(3)
        local cases = {
            { F.margin_ranking_loss, { x, x, nil }, "margin_ranking_loss: expected target" },
            { F.cosine_embedding_loss, { x, nil, x }, "cosine_embedding_loss: expected input2" },
            { F.triplet_margin_loss, { x, x, nil }, "triplet_margin_loss: expected negative" },
        }
        for _, c in ipairs(cases) do
            local ok, err = pcall(c[1], c[2][1], c[2][2], c[2][3])
            assert.is_false(ok)
            assert.matches("tide: " .. c[3] .. " to be a tensor, got nil", err, 1, true)
        end
    end)
end)

describe("ReduceLROnPlateau:step with a one-element bool tensor", function()
    it("names it (item() gave a Lua boolean, compared with a number; fuzz seed 5)", function()
        local p = tide.zeros(2):requires_grad_(true)
        local s = tide.optim.lr_scheduler.ReduceLROnPlateau(tide.optim.SGD({ p }, { lr = 0.1 }))
        local ok, err = pcall(function() s:step(tide.tensor({ true })) end)
        assert.is_false(ok)
        assert.matches("tide: ReduceLROnPlateau:step: expected the metric as a number or a " ..
            "one-element tensor of numbers, got a bool tensor", err, 1, true)
        assert.are.equal(0, s.last_epoch)
        s:step(tide.tensor({ 0.5 }))
        assert.are.equal(1, s.last_epoch)
    end)
end)

describe("polygamma with an infinite or huge order", function()
    it("raises for inf, and does not loop over a huge n (fuzz seed 9004: a hang)", function()
        local x = tide.tensor({ 0.5, 2 })
        assert.has_error(function() x:polygamma_(1 / 0) end,
            "tide: polygamma: n must be an integer >= 0 (the derivative's order), got inf")
        local r = tide.polygamma(1e15, tide.tensor({ 2.0 }, { dtype = "float64" }))
        assert.is_true(r:isnan():any():item() or r:isinf():any():item())
    end)
end)

describe("linalg's solvers given NaN or inf", function()
    it("raise instead of calling LAPACK (ASan fuzz seed 9105: gesdd hung on them)", function()
        local a = tide.tensor({ { 1, 0 / 0, 2 }, { 3, 1, 1e30 }, { 1 / 0, 2, 3 } })
        local msg = "the input has NaN or inf, for which the solver does not converge; check " ..
            "it (isfinite) before the call"
        for _, call in ipairs({
            { "linalg.svd", function() return tide.linalg.svd(a, { full_matrices = false }) end },
            { "linalg.svd", function()
                return tide.pinverse(a:reshape(1, 3, 3):expand(2, 3, 3))
            end },
            { "linalg.eigh", function() return tide.linalg.eigh(a) end },
        }) do
            local ok, err = pcall(call[2])
            assert.is_false(ok)
            assert.matches("tide: " .. call[1] .. ": " .. msg, err, 1, true)
        end
    end)
end)

describe("diagonal with an offset past any size #lua53", function()
    it("is empty, math.mininteger included (ASan fuzz seed 9205: its negation overflowed)",
        function()
        local a = tide.ones({ 3, 4 })
        for _, off in ipairs({ math.mininteger, math.maxinteger, -3, 4, -100 }) do
            assert.are.same({ 0 }, tide.diagonal(a, off):size(), tostring(off))
        end
        local m = tide.arange(1, 13):reshape(3, 4)
        assert.are.same({ 9 }, tide.diagonal(m, -2):totable()) -- the last row's first element
        assert.are.same({ 4 }, tide.diagonal(m, 3):totable())  -- the first row's last one
    end)
end)

describe("writes into an expanded view", function()
    it("are refused before anything is written, as PyTorch refuses them (copy_, random " ..
        "fills, index_add_, scatter_; fill_ and zero_ write one value and are accepted)", function()
        local x = tide.ones({ 2, 1 }):expand(2, 3)
        local msg = "the output tensor is an expanded view (stride 0 at dim 2), so several " ..
            "results would land on one element; call :clone() first"
        local idx = tide.tensor({ { 1, 2, 3 }, { 1, 2, 3 } })
        for _, call in ipairs({
            { "copy_", function() return x:copy_(tide.zeros({ 2, 3 })) end },
            { "uniform_", function() return x:uniform_() end },
            { "normal_", function() return x:normal_() end },
            { "exponential_", function() return x:exponential_() end },
            { "bernoulli_", function() return x:bernoulli_() end },
            { "index_add_", function() return x:index_add_(2, tide.tensor({ 1 }),
                tide.ones({ 2, 1 })) end },
            { "scatter_", function() return x:scatter_(2, idx, 7) end },
            { "add_", function() return x:add_(1) end },
        }) do
            local ok, err = pcall(call[2])
            assert.is_false(ok, call[1])
            assert.matches("tide: " .. call[1] .. ": " .. msg, err, 1, true)
            assert.are.same({ { 1, 1, 1 }, { 1, 1, 1 } }, x:totable(), call[1])
        end
        x:fill_(5)
        assert.are.same({ { 5, 5, 5 }, { 5, 5, 5 } }, x:totable())
    end)
end)

describe("masked_select over empty shapes with huge dims #lua53", function()
    it("is empty (ASan fuzz seed 1901: the element count overflowed before the 0)", function()
        local big = 4294967296
        local x = tide.zeros({ 0 }):expand(big, big, 0)
        local r = x:masked_select(tide.zeros({ 0 }, { dtype = "bool" }):expand(big, big, 0))
        assert.are.same({ 0 }, r:size())
        local m = tide.tensor({ true, false, true })
        assert.are.same({ 1, 3 }, tide.tensor({ 1, 2, 3 }):masked_select(m):totable())
    end)
end)

describe("mvlgamma with a huge p #lua53", function()
    it("is empty for an empty input, and refused past memory (ASan fuzz seed 1905: hung)",
        function()
        local big = 2147483648
        local r = tide.mvlgamma(tide.zeros({ 0, 1, 3 }), big)
        assert.are.same({ 0, 1, 3 }, r:size())
        local err = tide_error(function() return tide.mvlgamma(tide.full({ 2 }, 3e9), big) end)
        assert.matches("tide: mvlgamma: the 2147483648 terms of 2 elements would take 40.0 GB",
            err, 1, true)
        -- PyTorch's values: lgamma's sum over the p terms, plus p (p - 1) / 4 log(pi)
        local v = tide.mvlgamma(tide.tensor({ 2.5 }, { dtype = "float64" }), 3):item()
        assert.is_true(math.abs(v - 1.8809954616117746) < 1e-12, tostring(v))
    end)
end)

describe("combinations with a huge r #lua53", function()
    it("counts in a few steps: none past the elements, refused past memory (ASan fuzz seed 4109: hung)",
        function()
        local t = tide.tensor({ 1, 2, 3, 4 }, { dtype = "float64" })
        local big = 2147483648
        assert.are.same({ 0, big }, tide.combinations(t, big):size())
        local err = tide_error(function()
            return tide.combinations(t, big, { with_replacement = true })
        end)
        assert.matches("tide: combinations: %d+ combinations of 2147483648 would take", err)
        -- PyTorch 1.13's counts: C(4, 3), C(4, 4), C(4 + 3 - 1, 3)
        assert.are.same({ 4, 3 }, tide.combinations(t, 3):size())
        assert.are.same({ { 1, 2, 3, 4 } }, tide.combinations(t, 4):totable())
        assert.are.same({ 20, 3 }, tide.combinations(t, 3, { with_replacement = true }):size())
    end)
end)

describe("adaptive max pooling over no planes and a huge length #lua53", function()
    it("is empty, building no windows (fuzz seed 4402: hung on a 0 x 2^32 input)", function()
        local F = tide.nn.functional
        local x = tide.zeros({ 0, 4294967296 }, { dtype = "bfloat16" })
        local out, idx = tide.adaptive_max_pool1d(x, 1)
        assert.are.same({ 0, 1 }, out:size())
        assert.are.same({ 0, 1 }, idx:size())
        assert.are.equal("int64", idx.dtype)
        -- PyTorch 1.13: [0, 2, 3, 4] to (2, 2) is [0, 2, 2, 2], and the gradient reaches the input
        local y = tide.zeros(0, 2, 3, 4):requires_grad_()
        local o, i = F.adaptive_max_pool2d(y, { 2, 2 }, { return_indices = true })
        assert.are.same({ 0, 2, 2, 2 }, o:size())
        assert.are.same({ 0, 2, 2, 2 }, i:size())
        o:sum():backward()
        assert.are.same({ 0, 2, 3, 4 }, y.grad:size())
        -- the windows, built by tensor arithmetic now: PyTorch's values and 0-based indices
        -- [1, 3, 6] for adaptive_max_pool1d([[1, 5, 2, 8, 3, 3, 9]], 3)
        local v, k = F.adaptive_max_pool1d(tide.tensor({ { 1, 5, 2, 8, 3, 3, 9 } }):float(), 3,
            { return_indices = true })
        assert.are.same({ { 5, 8, 9 } }, v:totable())
        assert.are.same({ { 2, 4, 7 } }, k:totable())
    end)
end)

describe("a scheduler's per-group list holding something else than numbers", function()
    it("raises naming it (ASan fuzz seed 4702: arithmetic on a ReLU value)", function()
        local M = tide.optim.SGD(tide.nn.Linear(3, 2):parameters(), 1e-12)
        local err = tide_error(function()
            return tide.optim.lr_scheduler.OneCycleLR(M, { tide.nn.ReLU() }, 3)
        end)
        assert.matches("tide: OneCycleLR: expected max_lr to be a number or a list of numbers, " ..
            "got table at position 1", err, 1, true)
        assert.are.equal(1e-12, M.param_groups[1].lr) -- the optimizer as it was
        -- a list of numbers, one per group, as before
        local S = tide.optim.lr_scheduler.OneCycleLR(M, { 0.1 }, 3)
        assert.are.equal(0.1, M.param_groups[1].max_lr)
        assert.is_true(S ~= nil)
    end)
end)

describe("default_collate given a complex tensor", function()
    it("raises naming it; complex fields stack (ASan fuzz seed 44429: looped over #z = 2^32)",
        function()
        local pack = table.pack or function(...) return { n = select("#", ...), ... } end
        local z = tide.zeros(2, 3, { dtype = tide.cfloat })
        local err = tide_error(function() return tide.data.default_collate(z) end)
        assert.matches("tide: default_collate: expected a non-empty list of packed samples " ..
            "({compat.pack(ds:get(i)), ...}), got a tensor", err, 1, true)
        local huge = tide.zeros(4294967296, 4294967296, 0):to(tide.cfloat)
        assert.matches("got a tensor", tide_error(function()
            return tide.data.default_collate(huge)
        end), 1, true)
        -- a complex field of the samples is stacked as a real one is, alone or in a table
        local b, n = tide.data.default_collate({ pack(z[1], 1), pack(z[2], 2) })
        assert.are.same({ 2, 3 }, b.shape)
        assert.are.equal("complex64", b.dtype)
        assert.are.same({ 1, 2 }, n:totable())
        local t = tide.data.default_collate({ pack({ a = z[1] }), pack({ a = z[2] }) })
        assert.are.same({ 2, 3 }, t.a.shape)
    end)
end)

describe("a complex tensor where a list is read (a Lua table: its rows by #z)", function()
    it("is copied by tide.tensor, kept by as_tensor, refused by optimizers as one tensor",
        function()
        local z = tide.complex(tide.tensor({ 1, 2 }, { dtype = "float32" }),
            tide.tensor({ 3, 4 }, { dtype = "float32" }))
        -- tide.tensor(z) gave an empty float32 tensor: a copy now, complex, detached
        local c = tide.tensor(z:requires_grad_())
        assert.are.equal("complex64", c.dtype)
        assert.is_false(rawequal(c, z))
        assert.is_false(c.requires_grad)
        assert.are.same({ { 1, 3 }, { 2, 4 } }, tide.view_as_real(c):totable())
        assert.are.equal("complex128", tide.tensor(z, { dtype = tide.cdouble }).dtype)
        assert.is_true(rawequal(z, tide.as_tensor(z)))
        assert.are.equal("complex128", tide.as_tensor(z, { dtype = tide.cdouble }).dtype)
        -- SGD(z) looped over #z rows (2^32 of them for a huge empty one)
        local huge = tide.zeros(4294967296, 4294967296, 0):to(tide.cfloat)
        -- one complex tensor is no list of parameters (PyTorch's TypeError); in a list it is a
        -- complex parameter (spec/complex_parameter_spec.lua)
        assert.matches("tide: SGD: expected a list of parameters (model:parameters()), got a " ..
            "tensor; params argument given to the optimizer should be an iterable of Tensors " ..
            "or dicts: pass {w}", tide_error(function()
                return tide.optim.SGD(huge, 0.1)
            end), 1, true)
    end)
end)

describe("an FFT of an empty batch (fuzz seed 44522: rfftn looped over a huge size's factors)", function()
    it("skips the transform of nothing; a size past memory raises", function()
        -- rfftn(zeros(0, 1), {1, 2^62}) factored 2^62 (2^31 trial divisions) for an empty batch
        -- (tide_error: a tide: error at this line; the output's size is past any memory)
        tide_error(function()
            return tide.fft.rfftn(tide.zeros(0, 1), { 1, 4611686018427387904 })
        end)
        -- the empty batches' shapes, as PyTorch's
        assert.are.same({ 0, 3 }, { tide.fft.fft(tide.zeros(0, 3)):size(1),
            tide.fft.fft(tide.zeros(0, 3)):size(2) })
        local r = tide.fft.rfft(tide.zeros(2, 0, 8))
        assert.are.same({ 2, 0, 5 }, { r:size(1), r:size(2), r:size(3) })
        assert.are.equal(5, tide.fft.fft(tide.zeros(0, 3), 5):size(2))
    end)
end)

describe("fuzz seeds 44540-44548: alias_copy, detach_copy, a 1-d pool's size given an object",
    function()
        it("raise tide: errors naming the argument", function()
            assert.matches("tide: alias_copy: expected a tensor as input, got nil",
                tide_error(function() return tide.alias_copy(nil) end), 1, true)
            assert.matches("tide: detach_copy: expected a tensor as input, got 3",
                tide_error(function() return tide.detach_copy(3) end), 1, true)
            -- a complex tensor as kernel_size: its # (a length) made next() fail ("invalid
            -- key to 'next'"); now the integer check names it
            local z = tide.complex(tide.ones(2), tide.zeros(2))
            assert.matches("tide: max_pool1d: expected kernel_size to be an integer >= 1",
                tide_error(function() return tide.nn.functional.max_pool1d(tide.ones(1, 2, 4), z)
                end), 1, true)
            assert.is_true(tide.equal(tide.alias_copy(tide.ones(2)), tide.ones(2)))
        end)
    end)

describe("fuzz seed 44565: a BertConfig's id2label holding a NaN", function()
    it("raises a tide: error naming the label", function()
        local ok, err = pcall(tide.models.bert.BertConfig, { vocab_size = 40, hidden_size = 16,
            num_hidden_layers = 1, num_attention_heads = 2, id2label = { a = 0 / 0 } })
        assert.is_false(ok)
        assert.matches("tide: BertConfig: id2label maps ids to label names (strings), got nan " ..
            "at a", tostring(err), 1, true)
    end)
end)

describe("fuzz seed 44623: F.conv1d with string padding and a weight that is no tensor", function()
    it("raises the weight check's tide: error", function()
        assert.matches("tide: conv1d: ", tide_error(function()
            return tide.nn.functional.conv1d(tide.ones(2, 5), true, nil, { padding = "same" })
        end), 1, true)
        assert.matches("tide: conv2d: expected 4-D weight", tide_error(function()
            return tide.nn.functional.conv2d(tide.ones(1, 2, 5, 5), tide.ones(3),
                nil, { padding = "same" })
        end), 1, true)
    end)
end)

describe("session 34's findings (ASan fuzz seeds 44681-44688)", function()
    it("special.multigammaln of an empty tensor with a huge p returns at once (it looped p " ..
        "times: a hang)", function()
        local x = tide.zeros(2, 0, 3):select(1, 1)
        assert.are.same({ 0, 3 }, tide.special.multigammaln(x, 2147483648):size())
        -- PyTorch's special.multigammaln is mvlgamma: one computation, one message
        assert.has_error(function() tide.special.multigammaln(tide.tensor({ 0.5 }), 3) end,
            "tide: special.multigammaln: every element must be greater than (p - 1) / 2 = 1 " ..
            "(p = 3)")
    end)

    it("a complex gather with an index that is not a tensor raises tide's error", function()
        local z = tide.view_as_complex(tide.randn(2, 3, 2))
        assert.has_error(function() z:gather(2, -1 / 0) end,
            "tide: gather: index must be an int64 tensor, got number")
        assert.has_error(function() z:gather(1, function() end) end,
            "tide: gather: index must be an int64 tensor, got function")
    end)
end)

describe("session 35's findings (ASan fuzz seeds 44711-44746)", function()
    it("div and divide with a number where an empty options table may go raise tide's error " ..
        "(next() of a number was called)", function()
        for _, name in ipairs({ "div", "divide" }) do
            assert.has_error(function() tide[name](tide.ones(2), tide.ones(2), 4) end,
                "tide: div: takes one other operand, got an extra argument #3 (number); only " ..
                "add and sub take a scale (alpha)")
            assert.has_error(function() tide[name](tide.ones(2), tide.ones(2), tide.ones(2)) end)
            assert.are.same({ 0.5, 0.5 }, tide[name](tide.ones(2), 2, {}):totable())
        end
    end)

    it("repeat_interleave and unique along a dim of a tensor whose other dims multiply past " ..
        "2^63 beside a 0 (UBSan: a signed overflow in their product)", function()
        local x = tide.zeros(0):view(1, 1, 0):expand(4294967296, 4294967296, 0)
        assert.are.same({ 4294967296, 4294967296, 0 }, x:repeat_interleave(1, 3):size())
        assert.are.same({ 4294967296, 4294967296, 0 },
            x:repeat_interleave(tide.tensor({ 1 }), { dim = 3 }):size())
        assert.are.same({ 4294967296, 4294967296, 0 }, x:unique({ dim = 3 }):size())
    end)

    it("stft and istft with a hop_length or win_length that is not an integer raise tide's " ..
        "error (string.format was handed -inf; seeds 44740-44746)", function()
        local x = tide.randn(16)
        for _, v in ipairs({ true, 1.5, tide.ones(2) }) do
            local ok, err = pcall(tide.stft, x, 4, { hop_length = v, return_complex = true })
            assert.is_false(ok)
            assert.matches("tide: stft: hop_length = .*; expected an integer$", err)
            ok, err = pcall(tide.stft, x, 4, { win_length = v, return_complex = true })
            assert.matches("tide: stft: win_length = .*; expected an integer$", err)
        end
        local z = tide.stft(x, 4, { hop_length = 1, window = tide.hann_window(4),
            return_complex = true })
        local ok, err = pcall(function() return z:istft(4, { hop_length = false }) end)
        assert.is_false(ok)
        assert.matches("tide: istft: hop_length = false; expected an integer", err, 1, true)
    end)
end)

describe("session 40's findings (ASan fuzz seeds 44858-44907)", function()
    it("index_put and index_put_ with a hole in their indices raise tide's error (ipairs " ..
        "stopped at the hole and the empty list reached arithmetic on nil; seed 44869)", function()
        local x = tide.zeros(2, 3)
        for _, f in ipairs({ tide.index_put, x.index_put_ }) do
            local ok, err = pcall(f, x, { nil, tide.tensor({ 2 }) }, 4)
            assert.is_false(ok)
            assert.matches("tide: index_put_?: indices%[1%] must be an int64, int32 or bool " ..
                "tensor, got nil$", err)
        end
        assert.are.same({ { 0, 0, 0 }, { 0, 0, 0 } }, x:totable())
    end)

    it("stft of an empty batch of 2^32 samples ends (pad listed every position of the padded " ..
        "dim in a Lua loop: the fuzzer's instruction limit; seed 44902)", function()
        local x = tide.zeros(0, 4294967296, { dtype = "int64" })
        local z = x:stft(4, { return_complex = true })
        assert.are.same({ 0, 3, 4294967297 }, z:size())
        for _, mode in ipairs({ "reflect", "replicate", "circular" }) do
            local y = tide.nn.functional.pad(tide.zeros(0, 1, 4294967296), { 2, 3 }, mode)
            assert.are.same({ 0, 1, 4294967301 }, y:size())
        end
    end)
end)

describe("session 41's findings (ASan fuzz seeds 44933-45006)", function()
    it("a complex prod along a dim of 2^32 of an empty tensor ends, and an empty dim's product " ..
        "is 1 (a product one slice at a time: the fuzzer's instruction limit; seed 44959)",
        function()
            local x = tide.zeros(0, 4294967296):to("complex64")
            assert.are.same({ 0 }, x:prod(-1):size())
            local e = tide.zeros(0, 3):to("complex64"):prod(1)
            assert.are.same({ { 1, 0 }, { 1, 0 }, { 1, 0 } }, tide.view_as_real(e):tolist())
            -- halves times halves: PyTorch 1.13's values
            local z = tide.complex(tide.tensor({ { 1, 2, 3 }, { 0.5, -1, 2 } }, { dtype = "float32" }),
                tide.tensor({ { 0, 1, -1 }, { 2, 0.5, 1 } }, { dtype = "float32" }))
            assert.are.same({ { 7, 1 }, { -1.25, -5 } }, tide.view_as_real(z:prod(2)):tolist())
            assert.are.same({ -3.75, -36.25 }, tide.view_as_real(z:prod()):tolist())
        end)

    it("LambdaLR and MultiplicativeLR given a complex tensor as lr_lambda raise their own " ..
        "error (its # raised len's; seed 44978)", function()
        local opt = tide.optim.SGD(nn.Linear(3, 2):parameters(), 0)
        local z = tide.complex(tide.zeros(1):squeeze(), tide.zeros(1):squeeze())
        for _, name in ipairs({ "LambdaLR", "MultiplicativeLR" }) do
            local ok, err = pcall(tide.optim.lr_scheduler[name], opt, z)
            assert.is_false(ok)
            assert.matches("tide: " .. name .. ": expected lr_lambda to be a function or a list " ..
                "of 1 functions (one per parameter group), got a complex tensor", err, 1, true)
        end
    end)

    it("affine_grid_generator given a list of tensors as size, or a table as align_corners, " ..
        "raises tide's error (table.concat met a tensor; seed 44993)", function()
        local ok, err = pcall(tide.affine_grid_generator, tide.zeros(2, 1),
            { tide.zeros(4), 1, 2, 3 }, false)
        assert.is_false(ok)
        assert.matches("tide: affine_grid: size must be the output's {N, C, H, W} or " ..
            "{N, C, D, H, W} as sizes >= 0; size[1] is a tensor", err, 1, true)
        ok, err = pcall(tide.affine_grid_generator, tide.zeros(1, 2, 3), { 1, 1, 2, 2 }, { -1, 4 })
        assert.is_false(ok)
        assert.matches("tide: affine_grid_generator: align_corners must be a boolean, got table",
            err, 1, true)
    end)
end)
