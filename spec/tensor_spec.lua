-- tensor_spec.lua — creation, dtype inference, properties, t[i], lifetime (free, <close>),
-- tostring, totable, item, requires_grad, and argument errors with the caller's line.
local tide = require("tide")

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return err
end

describe("creation", function()
    it("infers int64, float32 and bool from the table #lua53", function()
        local i = tide.tensor({ { 1, 2, 3 }, { 4, 5, 6 } })
        assert.are.equal("int64", i.dtype)
        assert.are.same({ 2, 3 }, i.shape)
        assert.are.same({ { 1, 2, 3 }, { 4, 5, 6 } }, i:totable())
        assert.are.equal(math.type(i:totable()[1][1]), "integer")
        local f = tide.tensor({ 1, 2.5 })
        assert.are.equal("float32", f.dtype)
        assert.are.same({ 1.0, 2.5 }, f:totable())
        local b = tide.tensor({ true, false })
        assert.are.equal("bool", b.dtype)
        assert.are.same({ true, false }, b:totable())
    end)

    it("makes a 0-d tensor from a number", function()
        local s = tide.tensor(3)
        assert.are.same({}, s.shape)
        assert.are.equal(0, s:dim())
        assert.are.equal(3, s:item())
        assert.are.equal(3, s:totable())
        assert.are.equal("float32", tide.tensor(2.5).dtype)
        assert.are.equal(2.5, tide.tensor(2.5):item())
    end)

    it("honours opts.dtype, including half types", function()
        local d = tide.tensor({ 1, 2 }, { dtype = "float64" })
        assert.are.equal("float64", d.dtype)
        assert.are.same({ 1.0, 2.0 }, d:totable())
        local h = tide.tensor({ 0.5, -2 }, { dtype = "float16" })
        assert.are.equal("float16", h.dtype)
        assert.are.same({ 0.5, -2.0 }, h:totable())
        local bf = tide.tensor({ 1.5 }, { dtype = "bfloat16" })
        assert.are.same({ 1.5 }, bf:totable())
        assert.are.same({ 1, 0, 255 }, tide.tensor({ 1, 0, 255 }, { dtype = "uint8" }):totable())
        assert.are.same({ -7 }, tide.tensor({ -7 }, { dtype = "int32" }):totable())
    end)

    it("refuses out-of-range values for integer dtypes, as PyTorch's #lua53", function()
        -- torch.tensor([300], dtype=torch.uint8): "value cannot be converted to type uint8
        -- without overflow"; -5 wraps to 251 as PyTorch's; fractions truncate
        assert.are.same({ 251, 2, 255 }, tide.tensor({ -5, 2.5, 255 }, { dtype = "uint8" })
            :totable())
        for _, c in ipairs({ { 300, "uint8" }, { 3e9, "int32" }, { -3e9, "int32" },
            { math.maxinteger, "int32" }, { 2 ^ 63, "int64" }, { -1e300, "int64" },
            { 0 / 0, "int64" }, { -0.5, "uint8" } }) do
            assert.has_error(function() tide.tensor({ 1, c[1] }, { dtype = c[2] }) end)
        end
        assert.has_error(function() tide.tensor({ 300 }, { dtype = "uint8" }) end,
            "tide: tensor: the value 300 cannot be converted to uint8 without overflow (its " ..
            "range is -255 to 255); give a value in range or another dtype")
        assert.are.same({ 5 }, tide.tensor({ 5.7 }, { dtype = "int64" }):totable())
        -- a fill (fill_, full, masked_fill, a number in where) raises instead, as PyTorch's
        -- checked conversion; -1 wraps into uint8 as PyTorch's, infinities fit the floats
        local u = tide.zeros({ 1 }, { dtype = "uint8" })
        assert.has_error(function() u:fill_(300) end, "tide: fill_: the value 300 cannot be " ..
            "converted to uint8 without overflow (its range is -255 to 255); give a value in " ..
            "range or another dtype")
        assert.are.same({ 0 }, u:totable())
        assert.are.same({ 255 }, u:fill_(-1):totable())
        assert.has_error(function() tide.full({ 2 }, 1e5, { dtype = "float16" }) end,
            "tide: full: the value 100000 cannot be converted to float16 without overflow " ..
            "(its range is -65504 to 65504); give a value in range or another dtype")
        assert.has_error(function() tide.full({ 1 }, 0 / 0, { dtype = "int64" }) end)
        assert.are.same({ math.huge }, tide.full({ 1 }, math.huge):totable())
        local x = tide.zeros(2)
        local mask = tide.tensor({ true, false })
        assert.has_error(function() x:masked_fill_(mask, 1e300) end, "tide: masked_fill_: " ..
            "the value 1.0000000000000001e+300 cannot be converted to float32 without " ..
            "overflow (its range is -3.40282347e+38 to 3.40282347e+38); give a value in range " ..
            "or another dtype")
        assert.has_error(function() tide.where(mask, x, -1e300) end)
        assert.are.same({ 0, 0 }, x:totable())
        -- arithmetic with a number is no fill: it overflows to inf, as PyTorch's
        assert.are.same({ math.huge, math.huge }, (x + 1e300):totable())
    end)

    it("rejects ragged and mixed tables with the caller's line", function()
        assert.matches("tensor_spec.lua:%d+: tide: tensor: the nested table is ragged",
            catch(function() return tide.tensor({ { 1, 2 }, { 3 } }) end))
        -- booleans among numbers are 0 and 1, as PyTorch's
        assert.are.same({ 1, 1 }, tide.tensor({ 1, true }):totable())
        assert.matches("tide: tensor: elements must be numbers or booleans, got string",
            catch(function() return tide.tensor({ "a" }) end))
        assert.matches("tide: tensor: unknown dtype float8",
            catch(function() return tide.tensor({ 1 }, { dtype = "float8" }) end))
    end)

    it("takes a shape as integers or one table, options last", function()
        assert.are.same({ 2, 3 }, tide.zeros(2, 3).shape)
        assert.are.same({ 2, 3 }, tide.zeros({ 2, 3 }).shape)
        assert.are.same({ { 0, 0 } }, tide.zeros({ 1, 2 }, { dtype = "int64" }):totable())
        assert.are.same({ 1.0, 1.0 }, tide.ones(2, { dtype = "float64" }):totable())
        assert.are.equal("float32", tide.ones(2).dtype)
        assert.are.same({ 4 }, tide.empty(4).shape)
        assert.matches("tensor_spec.lua:%d+: tide: zeros: size %-2 at position 2 is invalid",
            catch(function() return tide.zeros(2, -2) end))
        assert.matches("tide: ones: size 1.5 at position 1 is not an integer",
            catch(function() return tide.ones(1.5) end))
        assert.matches("tide: zeros: options must be a table",
            catch(function() return tide.zeros(2, "cpu") end))
    end)

    it("full infers the dtype from the value", function()
        assert.are.same({ { 7, 7 } }, tide.full({ 1, 2 }, 7):totable())
        assert.are.equal("int64", tide.full({ 2 }, 7).dtype)
        assert.are.equal("float32", tide.full({ 2 }, 0.5).dtype)
        assert.are.same({ 0.5, 0.5 }, tide.full(2, 0.5):totable())
        assert.are.same({ { 1.5, 1.5 }, { 1.5, 1.5 } }, tide.full(2, 2, 1.5):totable())
        assert.are.same({ true }, tide.full({ 1 }, true):totable())
        assert.are.same({ 3.0 }, tide.full({ 1 }, 3, { dtype = "float64" }):totable())
    end)

    it("arange excludes stop and infers int64 or float32", function()
        assert.are.same({ 0, 1, 2, 3, 4 }, tide.arange(5):totable())
        assert.are.same({ 2, 3, 4 }, tide.arange(2, 5):totable())
        assert.are.same({ 1, 3 }, tide.arange(1, 5, 2):totable())
        assert.are.equal("int64", tide.arange(3).dtype)
        local f = tide.arange(0, 1, 0.25)
        assert.are.equal("float32", f.dtype)
        assert.are.same({ 0, 0.25, 0.5, 0.75 }, f:totable())
        assert.are.same({ 0.0, 1.0 }, tide.arange(2, { dtype = "float64" }):totable())
    end)

    it("eye #lua53", function()
        assert.are.same({ { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } }, tide.eye(3):totable())
        assert.are.same({ { 1, 0, 0 }, { 0, 1, 0 } }, tide.eye(2, 3):totable())
        assert.are.equal("float32", tide.eye(2).dtype)
        assert.are.equal("int64", tide.eye(2, { dtype = "int64" }).dtype)
        -- errors used to be named after the helper: "tide: arange: ... elements are too many"
        local ok, err = pcall(tide.eye, 3, math.maxinteger)
        assert.is_false(ok)
        assert.matches("tide: eye: 3 x 9223372036854775807 has more elements than fit in 64 bits",
            err)
    end)

    it("rand and randn are reproducible with manual_seed, the same on every device", function()
        tide.manual_seed(7)
        local a = tide.rand(100):totable()
        local n = tide.randn(50)
        tide.manual_seed(7)
        assert.are.same(a, tide.rand(100):totable())
        assert.are.same(n:totable(), tide.randn(50):totable())
        tide.manual_seed(7)
        assert.are.same(a, tide.rand(100, { device = "cpu:1" }):cpu():totable())
        for _, v in ipairs(a) do
            assert.is_true(v >= 0 and v < 1)
        end
        local m = n:mean():item()
        assert.is_true(math.abs(m) < 0.5)
    end)

    it("draws the same uniform numbers into contiguous and strided float32 tensors", function()
        -- a contiguous float32 row takes the vectorized generator, a strided one the general
        -- loop (src/cpu/random.c); element i of the result takes draw i either way
        tide.manual_seed(11)
        local want = { 0.5703073143959, 0.26667574048042, 0.19506604969501, 0.82284581661224,
            0.48406559228897, 0.041896406561136, 0.023826289921999, 0.33931970596313,
            0.59964162111282, 0.40246805548668 }
        local got = tide.rand(2, 5):reshape(-1):totable()
        for i = 1, #want do
            assert.is_true(math.abs(got[i] - want[i]) < 1e-12)
        end
        for _, range in ipairs({ { 0, 1 }, { -2, 3 }, { 5, 5 } }) do
            tide.manual_seed(7)
            local c = tide.empty(3, 1037):uniform_(range[1], range[2])
            tide.manual_seed(7)
            local s = tide.empty(1037, 3):t():uniform_(range[1], range[2])
            assert.is_false(s:is_contiguous())
            assert.are.equal(0, c:sub(s):abs():max():item())
            assert.is_true(c:min():item() >= range[1])
            assert.is_true(range[1] == range[2] or c:max():item() < range[2])
        end
    end)

    it("makes leaves with requires_grad, floating point only", function()
        local w = tide.zeros(2, { requires_grad = true })
        assert.is_true(w.requires_grad)
        assert.is_true(w.is_leaf)
        assert.is_nil(w.grad)
        assert.is_false(tide.zeros(2).requires_grad)
        assert.matches("tensor_spec.lua:%d+: tide: zeros: only floating%-point tensors can require "
            .. "gradients", catch(function()
                return tide.zeros(2, { dtype = "int64", requires_grad = true })
            end))
    end)
end)

describe("properties", function()
    local t = tide.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }, { dtype = "float32" })

    it("shape is a fresh table", function()
        local s = t.shape
        s[1] = 99
        assert.are.same({ 2, 3 }, t.shape)
    end)

    it("dim, numel, size, #t", function()
        assert.are.equal(2, t:dim())
        assert.are.equal(6, t:numel())
        assert.are.equal(3, t:size(2))
        assert.are.equal(3, t:size(-1))
        assert.are.same({ 2, 3 }, t:size())
        assert.are.equal(2, #t)
        assert.matches("tide: len: a 0%-dim tensor has no length; use t:item%(%)", catch(function() return #tide.tensor(1) end))
        assert.matches("tensor_spec.lua:%d+: tide: size: dim 3 is out of range for a tensor with 2 dims; "
            .. "use 1..2 or %-2..%-1", catch(function() return t:size(3) end))
    end)

    it("device is a device object, dtype a string", function()
        assert.are.equal(tide.device("cpu"), t.device)
        assert.are.equal("float32", t.dtype)
        assert.is_true(t:is_contiguous())
        assert.is_false(t:t():is_contiguous())
    end)

    it("keeps a script's own fields (PyTorch's setattr), refusing names it would hide", function()
        local p = tide.ones(2)
        assert.is_nil(p.foo)
        p._no_weight_decay, p.foo = true, { lr = 1 } -- p._optim = {...} (HazyResearch's Hyena)
        assert.is_true(p._no_weight_decay)
        assert.are.equal(1, p.foo.lr)
        assert.is_nil(tide.ones(2).foo) -- per tensor object
        p.foo = nil
        assert.is_nil(p.foo)
        assert.matches("tensor_spec.lua:%d+: tide: cannot set field 'require_grad' of a tensor " ..
            "%(did you mean 'requires_grad'%?%)", catch(function() p.require_grad = false end))
        assert.matches("tide: cannot set field 'add' of a tensor: it is the tensor's method; " ..
            "keep your value elsewhere %(a table keyed by the tensor%)",
            catch(function() p.add = 1 end))
        assert.matches("tide: cannot set field 'shape' of a tensor: it is the tensor's property",
            catch(function() p.shape = 1 end))
        -- under the profiler, which wraps the metamethods (fuzz: this crashed reading the
        -- wrapped __index's upvalues)
        local prof = tide.profiler.profile({ record_shapes = true })
        prof:start()
        local ok, err = pcall(function() p.shape = tide.ones(1) end)
        p.bar = 4
        prof:stop()
        assert.is_false(ok)
        assert.matches("it is the tensor's property", err)
        assert.are.equal(4, p.bar)
        assert.are.same({ 2 }, { p:size(1) })
        -- PyTorch's named tuple (x.max(1).indices): its fields name the Lua form
        local m = tide.tensor({ { 1, 5 }, { 7, 2 } })
        assert.matches("tensor_spec.lua:%d+: tide: a tensor has no field 'indices': an op of " ..
            "several results returns them as Lua results, not PyTorch's named tuple %(local " ..
            "values, indices = x:max%(2%)%), and an op of one result returns the tensor itself " ..
            "%(linalg.lstsq%(A, B%) is the solution%)",
            catch(function() return m:max(2).indices end))
        assert.matches("no field 'values'", catch(function() return m:sort().values end))
        -- torch.linalg.lstsq(A, B).solution, slogdet's .logabsdet, eigh's .eigenvectors: each
        -- of PyTorch's named-tuple fields raises rather than reading nil
        local a = tide.tensor({ { 2, 0 }, { 0, 4 } }, { dtype = "float64" })
        for _, k in ipairs({ "solution", "residuals", "rank", "singular_values", "eigenvalues",
            "eigenvectors", "logabsdet", "mantissa", "exponent", "LU", "pivots", "info", "Q",
            "R", "L", "U", "S", "Vh", "P", "counts" }) do
            assert.matches("tide: a tensor has no field '" .. k .. "'",
                catch(function() return a[k] end), 1, true)
        end
        assert.matches("no field 'solution'",
            catch(function() return tide.linalg.lstsq(a, a).solution end), 1, true)
        -- a method of the same name is the method (x.sign)
        assert.are.equal("function", type(a.sign))
    end)

    it("grad can be set to a tensor and cleared", function()
        local w = tide.zeros(2, { requires_grad = true })
        w.grad = tide.ones(2)
        assert.are.same({ 1, 1 }, w.grad:totable())
        w.grad = nil
        assert.is_nil(w.grad)
        assert.matches("tide: t.grad = v: v must be a tensor or nil, got number",
            catch(function() w.grad = 3 end), 1, true)
    end)

    it("requires_grad_ sets the flag and returns the tensor", function()
        local w = tide.zeros(2)
        assert.is_true(rawequal(w, w:requires_grad_()))
        assert.is_true(w.requires_grad)
        w:requires_grad_(false)
        assert.is_false(w.requires_grad)
        w.requires_grad = true
        assert.is_true(w.requires_grad)
        assert.matches("tide: requires_grad_: only floating%-point tensors",
            catch(function() tide.arange(2):requires_grad_() end))
    end)

    it("requires_grad_(false) on a non-leaf raises, as in PyTorch; (true) stays a no-op", function()
        local w = tide.ones(2, { requires_grad = true })
        local y = w * 2
        assert.are.equal("tensor_spec.lua:" .. debug.getinfo(1, "l").currentline + 2
            .. ": tide: requires_grad_: can only change requires_grad of leaf tensors; use y:detach() to get a tensor without history",
            catch(function() y:requires_grad_(false) end):match("[^/]*$"))
        assert.matches("tide: requires_grad_: can only change requires_grad of leaf tensors",
            catch(function() y.requires_grad = false end))
        assert.is_true(y.requires_grad)
        assert.is_true(rawequal(y, y:requires_grad_(true)))
        assert.is_true(rawequal(y, y:requires_grad_()))
        assert.is_true(y.requires_grad)
        assert.is_false(y.is_leaf)
        -- leaves still switch both ways, and a detached result is a leaf
        w:requires_grad_(false)
        assert.is_false(w.requires_grad)
        local d = y:detach()
        d:requires_grad_(true)
        d:requires_grad_(false)
        assert.is_false(d.requires_grad)
    end)

    it("_version counts the in-place writes to a storage, through any view", function()
        local x = tide.zeros(2, 3)
        assert.are.equal(0, x:_version()) -- creation functions start at 0
        for _, f in ipairs({ tide.ones, tide.empty, tide.rand, tide.randn }) do
            assert.are.equal(0, f(2):_version())
        end
        assert.are.equal(0, tide.full({ 2 }, 7):_version())
        assert.are.equal(0, tide.tensor({ 1, 2 }):_version())
        local steps = {
            function() x:add_(1) end,
            function() x[1]:fill_(2) end, -- a view: its base counts too
            function() x[2] = 5 end,
            function() x[1] = tide.ones(3) end,
            function() x:copy_(tide.ones(2, 3)) end,
            function() x:narrow(2, 1, 1):mul_(2) end,
            function() x:uniform_() end,
            function() x:zero_() end,
            function() x:index_add_(1, { 1 }, tide.ones(1, 3)) end,
            function() x:clamp_(0, 1) end,
            function() x:view(6):sub_(1) end,
            function() x:set_(tide.zeros(2, 3)) end,
        }
        for i, f in ipairs(steps) do
            f()
            assert.are.equal(i, x:_version(), "step " .. i)
        end
        local v = x:view(6)
        assert.are.equal(x:_version(), v:_version())
        -- out-of-place ops, views and failed in-place calls write nothing
        local n = x:_version()
        local _ = x + 1, x:t(), x:clone(), x:sum(), x:to("cpu:1"), x:view(3, 2)
        assert.is_false(pcall(function() x:add_(tide.ones(4)) end))
        assert.is_false(pcall(function() x:fill_("a") end))
        assert.are.equal(n, x:_version())
        -- failing in the kernel, after the output was accepted (integer division by zero is
        -- found by the kernel as it reads the divisor)
        local h = tide.ones({ 2 }, { dtype = "int64" })
        for _, f in ipairs({ function() h:floor_divide_(0) end,
            function() h:floor_divide_(tide.zeros(2, { dtype = "int64" })) end,
            function() h:remainder_(0) end }) do
            assert.is_false(pcall(f))
        end
        assert.are.equal(0, h:_version())
        assert.are.same({ 1, 1 }, h:totable())
        assert.are.equal(0, (x + 1):_version())
        -- results an op fills itself: sums over an empty dim
        assert.are.equal(0, tide.zeros(0, 2):sum(1):_version())
        assert.are.equal(0, tide.ones(2, 0):matmul(tide.ones(0, 3)):_version())
    end)
end)

describe("indexing", function()
    it("t[i] is the view select(1, i), negative from the end", function()
        local t = tide.tensor({ { 1, 2 }, { 3, 4 }, { 5, 6 } })
        assert.are.same({ 3, 4 }, t[2]:totable())
        assert.are.same({ 5, 6 }, t[-1]:totable())
        assert.are.equal(4, t[2][2]:item())
        local row = t[1]
        row:fill_(0) -- a view: writes through
        assert.are.same({ { 0, 0 }, { 3, 4 }, { 5, 6 } }, t:totable())
        assert.matches("tensor_spec.lua:%d+: tide: index: index 4 is out of range for dim 1 of size 3",
            catch(function() return t[4] end))
        assert.matches("index 0 is out of range", catch(function() return t[0] end))
        -- just past the end, where ipairs(t) stops on 5.3 and 5.4: the loop PyTorch's
        -- `for row in t` ports to
        assert.matches("index 4 is out of range for dim 1 of size 3; use 1..3 (or -3..-1); to " ..
            "loop over the rows: for i, row in ipairs(t:unbind())", catch(function() return t[4] end),
            1, true)
        assert.is_nil(catch(function() return t[5] end):find("unbind", 1, true))
        assert.are.same({ 3, 4 }, t[2.0]:totable())
        -- any other number raises (it read nil, and the script failed later, far from here)
        assert.matches("tensor_spec.lua:%d+: tide: index: a tensor is indexed by an integer",
            catch(function() return t[1.5] end))
    end)

    it("t[i] = number fills the slice, t[i] = tensor copies into it", function()
        local t = tide.zeros(2, 3)
        t[1] = 5
        assert.are.same({ { 5, 5, 5 }, { 0, 0, 0 } }, t:totable())
        t[-1] = tide.tensor({ 1, 2, 3 })
        assert.are.same({ { 5, 5, 5 }, { 1, 2, 3 } }, t:totable())
        t[2] = tide.tensor({ 9 }) -- broadcast
        assert.are.same({ { 5, 5, 5 }, { 9, 9, 9 } }, t:totable())
        local v = tide.zeros(3)
        v[2] = 7
        assert.are.same({ 0, 7, 0 }, v:totable())
    end)

    it("a failed t[i] = v leaves the tensor unchanged", function()
        local t = tide.ones(2, 2)
        assert.matches("tensor_spec.lua:%d+: tide: setindex: cannot copy",
            catch(function() t[1] = tide.ones(3) end))
        assert.matches("tide: setindex: value must be a number or a tensor, got string",
            catch(function() t[1] = "x" end))
        assert.matches("tide: setindex: index 3 is out of range for dim 1 of size 2", catch(function() t[3] = 1 end))
        assert.are.same({ { 1, 1 }, { 1, 1 } }, t:totable())
    end)
end)

describe("lifetime", function()
    it("free releases; later use raises; free is idempotent", function()
        local t = tide.ones(3)
        t:free()
        t:free()
        assert.are.equal("tensor_spec.lua:" .. debug.getinfo(1, "l").currentline + 1
            .. ": tide: add: attempt to use a freed tensor", catch(function() return t + 1 end):match("[^/]*$"))
        assert.matches("tide: sum: attempt to use a freed tensor", catch(function() return t:sum() end))
        assert.matches("tide: add: attempt to use a freed tensor", catch(function() return tide.ones(3) + t end))
        assert.matches("tide: shape: attempt to use a freed tensor", catch(function() return t.shape end))
        assert.are.equal("[tide.Tensor (freed)]", tostring(t))
    end)

    it("only tensors pass the tensor test: other userdata, strings and tables of any length do not", function()
        local core = require("tide.core")
        local t = tide.ones(2)
        assert.is_true(core.is_tensor(t))
        -- a full userdata (a FILE handle, a device), light userdata, and values whose length
        -- is a tensor userdata's size
        local others = { io.stdout, tide.device("cpu"), ("x"):rep(24), { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
            13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24 }, ("y"):rep(16), 24, true }
        for _, v in ipairs(others) do
            assert.is_false(core.is_tensor(v), tostring(v))
        end
        assert.matches("tide: add: expected a tensor or a number, got userdata",
            catch(function() return t + io.stdout end))
        assert.matches("tide: sum: argument #1 must be a tensor, got userdata",
            catch(function() return t.sum(io.stdout) end))
        assert.matches("tide: sum: argument #1 must be a tensor, got string",
            catch(function() return t.sum(("x"):rep(24)) end))
        assert.are.same({ 1, 1 }, t:totable()) -- and the tensor is as it was
    end)

    it("views keep their base's storage alive", function()
        local v
        do
            local base = tide.tensor({ 1, 2, 3 })
            v = base:narrow(1, 2, 2)
            base:free()
        end
        collectgarbage()
        assert.are.same({ 2, 3 }, v:totable())
    end)

    it("collects dropped tensors (the collector is told about their bytes)", function()
        collectgarbage()
        -- dead tensors count as Lua's own bytes (lua/gc.c), and an incremental collector (5.3,
        -- 5.1, LuaJIT) lets garbage reach about twice the Lua heap (its pause, then its
        -- marking), which the whole suite's specs make tens of MB here: the bound follows the
        -- heap, and the loop makes twice the bound, so that tensors never collected exceed it
        local heap = collectgarbage("count") * 1024
        local bound = math.max(64 * 2 ^ 20, 2.5 * heap)
        local before, peak = tide.memory_stats("cpu").allocated, 0
        for _ = 1, math.ceil(2 * bound / 2 ^ 20) do
            local _ = tide.zeros(256 * 1024) -- 1 MiB each
            peak = math.max(peak, tide.memory_stats("cpu").allocated - before)
        end
        assert.is_true(peak < bound, string.format("dropped tensors were not collected: %.0f " ..
            "MiB held at the peak, behind a Lua heap of %.0f MiB", peak / 2 ^ 20, heap / 2 ^ 20))
    end)
end)

describe("tostring", function()
    it("prints integers aligned, then shape, dtype and device", function()
        assert.are.equal("[[ 1,  2,  3],\n [40,  5, -6]]\n[tide.Tensor of shape [2, 3], int64, cpu]",
            tostring(tide.tensor({ { 1, 2, 3 }, { 40, 5, -6 } })))
    end)

    it("prints floats with 4 decimals", function()
        assert.are.equal("[ 1.5000, -0.2500]\n[tide.Tensor of shape [2], float32, cpu]",
            tostring(tide.tensor({ 1.5, -0.25 })))
        assert.are.equal("2.5000\n[tide.Tensor of shape [], float64, cpu]",
            tostring(tide.tensor(2.5, { dtype = "float64" })))
    end)

    it("switches to scientific notation for wide ranges", function()
        assert.are.equal("[1.0000e-05, 1.0000e+03]\n[tide.Tensor of shape [2], float32, cpu]",
            tostring(tide.tensor({ 1e-5, 1000.0 })))
    end)

    it("prints booleans, 3-d blocks and empty tensors", function()
        assert.are.equal("[ true, false]\n[tide.Tensor of shape [2], bool, cpu]",
            tostring(tide.tensor({ true, false })))
        assert.are.equal("[[[1, 2]],\n\n [[3, 4]]]\n[tide.Tensor of shape [2, 1, 2], int64, cpu]",
            tostring(tide.tensor({ { { 1, 2 } }, { { 3, 4 } } })))
        assert.are.equal("[]\n[tide.Tensor of shape [0], float32, cpu]", tostring(tide.zeros(0)))
    end)

    it("elides the middle of tensors over 1000 elements, 3 at each edge", function()
        assert.are.equal("[   0,    1,    2, ..., 1997, 1998, 1999]\n"
            .. "[tide.Tensor of shape [2000], int64, cpu]", tostring(tide.arange(2000)))
        local s = tostring(tide.arange(1100):view(100, 11))
        assert.are.equal("[[   0,    1,    2, ...,    8,    9,   10],\n"
            .. " [  11,   12,   13, ...,   19,   20,   21],\n"
            .. " [  22,   23,   24, ...,   30,   31,   32],\n"
            .. " ...,\n"
            .. " [1067, 1068, 1069, ..., 1075, 1076, 1077],\n"
            .. " [1078, 1079, 1080, ..., 1086, 1087, 1088],\n"
            .. " [1089, 1090, 1091, ..., 1097, 1098, 1099]]\n"
            .. "[tide.Tensor of shape [100, 11], int64, cpu]", s)
    end)

    it("prints non-contiguous views in logical order", function()
        assert.are.equal("[[1, 3],\n [2, 4]]\n[tide.Tensor of shape [2, 2], int64, cpu]",
            tostring(tide.tensor({ { 1, 2 }, { 3, 4 } }):t()))
    end)
end)

describe("pinned memory", function()
    it("is_pinned is false for ordinary tensors; pin_memory needs CUDA", function()
        local t = tide.ones(4)
        assert.is_false(t:is_pinned())
        if tide.cuda.is_available() then
            local p = t:pin_memory()
            assert.is_true(p:is_pinned())
            assert.are.same({ 1, 1, 1, 1 }, p:totable())
            assert.is_true(rawequal(p, p:pin_memory()))
        else
            assert.matches("tensor_spec.lua:%d+: tide: pin_memory: ", catch(function() return t:pin_memory() end))
        end
    end)
end)

describe("item and totable", function()
    it("item returns a Lua number of the right kind #lua53", function()
        assert.are.equal(math.type(tide.tensor({ 3 }):item()), "integer")
        assert.are.equal(3, tide.tensor({ 3 }):item())
        assert.are.equal(math.type(tide.tensor({ 3.0 }):item()), "float")
        assert.are.equal(true, tide.tensor({ true }):item())
        assert.are.equal(0.5, tide.tensor({ { 0.5 } }):item())
        assert.matches("tensor_spec.lua:%d+: tide: item: the tensor has 2 elements; item%(%) needs exactly one",
            catch(function() return tide.ones(2):item() end))
    end)

    it("totable follows views", function()
        local t = tide.tensor({ { 1, 2, 3 }, { 4, 5, 6 } })
        assert.are.same({ { 1, 4 }, { 2, 5 }, { 3, 6 } }, t:t():totable())
        assert.are.same({ 2, 5 }, t:select(2, 2):totable())
    end)
end)

-- API.md: unknown option keys raise everywhere, with the closest valid name
describe("unknown options", function()
    local function err_of(f, ...)
        local ok, err = pcall(f, ...)
        assert.is_false(ok)
        return err
    end

    it("every creation function rejects a misspelt key with the closest valid name", function()
        assert.matches('^spec/tensor_spec%.lua:%d+: tide: randn: unknown option "require_grad" ' ..
            '%(did you mean "requires_grad"%?%)$', err_of(tide.randn, 2, { require_grad = true }))
        for _, c in ipairs({
            { "zeros", { 2 } }, { "ones", { 2 } }, { "empty", { 2 } }, { "rand", { 2 } },
            { "randn", { 2 } }, { "full", { { 2 }, 1 } }, { "arange", { 0, 3 } }, { "eye", { 2 } },
            { "tensor", { { 1, 2 } } },
        }) do
            local name, args = c[1], c[2]
            args[#args + 1] = { devcie = "cpu" }
            assert.matches('tide: ' .. name .. ': unknown option "devcie" %(did you mean "device"%?%)',
                err_of(tide[name], table.unpack(args)))
        end
        assert.matches('tide: zeros: unknown option "colour"; options are device, dtype, ' ..
            'requires_grad', err_of(tide.zeros, 2, { colour = 1 }), 1)
        assert.matches("tide: zeros: unknown option 1 %(a number key%)", err_of(tide.zeros, 2, { 3 }))
    end)

    it("to rejects an unknown key and changes nothing", function()
        local t = tide.ones(2)
        assert.matches('^spec/tensor_spec%.lua:%d+: tide: to: unknown option "copyy" %(did you ' ..
            'mean "copy"%?%)$', err_of(t.to, t, "cpu", { copyy = true }))
        assert.is_true(rawequal(t, t:to("cpu", { copy = false, non_blocking = false })))
    end)
end)

describe("randperm", function()
    it("is a 1-based permutation of 1..n from tide's generator (manual_seed repeats it)", function()
        tide.manual_seed(5)
        local p = tide.randperm(10)
        assert.are.equal("int64", p.dtype)
        local seen = {}
        for _, v in ipairs(p:totable()) do
            assert.is_true(v >= 1 and v <= 10 and not seen[v])
            seen[v] = true
        end
        tide.manual_seed(5)
        assert.are.same(p:totable(), tide.randperm(10):totable())
        assert.are.same({}, tide.randperm(0):totable())
        local q = tide.randperm(4, { device = "cpu:1", dtype = "float32" })
        assert.are.equal("cpu:1", tostring(q.device))
        assert.are.equal("float32", q.dtype)
        assert.are.equal(10, q:sum():item())
    end)

    it("raises tide errors, never a raw bad argument of a hidden parameter", function()
        local function err_of(...)
            local ok, err = pcall(...)
            assert.is_false(ok)
            assert.is_nil(err:find("bad argument", 1, true))
            return err
        end
        assert.matches("^spec/tensor_spec%.lua:%d+: tide: randperm: expected n to be an integer, " ..
            "got no value$", err_of(tide.randperm))
        assert.matches("tide: randperm: n = %-1 is negative", err_of(tide.randperm, -1))
        assert.matches('tide: randperm: unknown option "dtpye" %(did you mean "dtype"%?%)',
            err_of(tide.randperm, 3, { dtpye = "int32" }))
        assert.matches("tide: eye: expected n to be an integer, got 2.5", err_of(tide.eye, 2.5))
        assert.matches("tide: manual_seed: expected the seed to be an integer, got string",
            err_of(tide.manual_seed, "x"))
    end)
end)
