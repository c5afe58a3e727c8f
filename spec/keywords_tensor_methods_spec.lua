-- keywords_tensor_methods_spec.lua: PyTorch's keyword arguments on the Tensor methods that make, convert, fill, index and copy tensors (lua/tide/tensor_keywords/tensor_methods.lua): new_*, to, type, the casts, clone, views, index_put, masked_*, put, take, fill_diagonal_ (positional wrap too), renorm, as_strided, nonzero, unique, the random fills (random_ with only to), copy_, requires_grad_: each keyword form against its positional form and PyTorch 1.13's values, the method and the tide.X function, and the unknown-key and given-twice errors of every signature.
local tide = require("tide")

-- x = torch.arange(6.).reshape(2, 3) in PyTorch
local function X()
    return tide.tensor({ { 0, 1, 2 }, { 3, 4, 5 } }):float()
end
local function long(t)
    return tide.tensor(t):long()
end

-- a result (a tensor or a list of tensors) as nested Lua lists
local function lists(r)
    if tide.is_tensor(r) then
        return r:tolist()
    end
    local out = {}
    for i, t in ipairs(r) do
        out[i] = lists(t)
    end
    return out
end

-- the keyword form's result and the positional form's are both PyTorch's values
local function agree(expected, kw, pos)
    assert.are.same(expected, lists(kw))
    assert.are.same(expected, lists(pos))
end

local function close(expected, t)
    local got = t:flatten():tolist()
    local want = tide.tensor(expected):flatten():tolist()
    assert.are.equal(#want, #got)
    for i = 1, #want do
        assert.is_true(math.abs(got[i] - want[i]) < 1e-5, ("%s vs %s"):format(got[i], want[i]))
    end
end

local function err(f)
    local ok, e = pcall(f)
    assert.is_false(ok)
    return tostring(e)
end

local function has(msg, prefix)
    assert.truthy(msg:find(prefix, 1, true), msg)
end

describe("keyword arguments of the tensor methods", function()
    local x
    before_each(function()
        x = X()
    end)

    it("new_zeros, new_ones, new_empty, new_full, new_tensor", function()
        -- x.new_full((2, 3), fill_value=7)
        local full = { { 7, 7, 7 }, { 7, 7, 7 } }
        agree(full, x:new_full({ 2, 3 }, { fill_value = 7 }), x:new_full({ 2, 3 }, 7))
        local r = x:new_full({ size = { 2 }, fill_value = 7, dtype = "int64" })
        assert.are.equal("int64", r.dtype)
        assert.are.same({ 7, 7 }, r:tolist())
        r = x:new_zeros({ size = { 2 }, dtype = tide.float64 })
        assert.are.equal("float64", r.dtype)
        assert.are.same({ 0, 0 }, r:tolist())
        agree({ { 1, 1 } }, x:new_ones({ size = { 1, 2 } }), x:new_ones(1, 2))
        assert.are.equal("int32", x:new_ones(2, 3, { dtype = "int32" }).dtype)
        assert.are.same({ 2, 2 }, x:new_empty({ size = { 2, 2 } }).shape)
        assert.is_true(x:new_zeros({ 2 }, { requires_grad = true }).requires_grad)
        r = x:new_tensor({ data = { 1, 2 }, dtype = "int64" })
        assert.are.equal("int64", r.dtype)
        assert.are.same({ 1, 2 }, r:tolist())
        assert.are.equal("float32", x:new_tensor({ 1, 2 }).dtype)
        has(err(function() return x:new_full({ 2 }, 1, { fill = 1 }) end),
            "tide: new_full: unknown option \"fill\"")
        has(err(function() return x:new_full({ 2 }, 1, { fill_value = 1 }) end),
            "tide: new_full: fill_value given twice, as argument #3 and by name; pass it once")
    end)

    it("to: dtype, device, tensor, non_blocking, copy, memory_format", function()
        local v = { { 0, 1, 2 }, { 3, 4, 5 } }
        local r = x:to({ dtype = tide.float64 })
        assert.are.equal("float64", r.dtype)
        assert.are.same(v, r:tolist())
        assert.are.equal(x, x:to("cpu", { non_blocking = true })) -- the same tensor, as PyTorch's
        assert.are_not.equal(x, x:to("cpu", { copy = true }))
        r = x:to("cpu", "float64", { copy = true })
        assert.are.equal("float64", r.dtype)
        assert.are.equal("int64", x:to(long({ 1 }), { non_blocking = true }).dtype)
        assert.are.equal("int32", x:to({ device = "cpu", dtype = "int32" }).dtype)
        assert.are.equal(x, x:to({ memory_format = "contiguous_format" }))
        assert.are.equal(4, tide.zeros(1, 2, 2, 2):to({ memory_format = "channels_last" }):dim())
        has(err(function() return x:to({ memory_format = "channels_last" }) end),
            "tide: to: memory_format \"channels_last\" needs a 4-D tensor, got 2-D")
        has(err(function() return x:to({ memory_format = "nchw" }) end),
            "tide: to: memory_format must be \"contiguous_format\"")
        -- PyTorch's constants (torch.channels_last, ...) are those names, never nil
        assert.are.same({ "contiguous_format", "preserve_format", "channels_last",
            "channels_last_3d" }, { tide.contiguous_format, tide.preserve_format,
            tide.channels_last, tide.channels_last_3d })
        has(err(function() return x:to({ memory_format = tide.channels_last }) end),
            "tide: to: memory_format \"channels_last\" needs a 4-D tensor, got 2-D")
        -- is_contiguous(memory_format): the strides of that layout, as PyTorch 1.13 answers
        local y = tide.ones({ 2, 3, 4, 5 })
        assert.is_true(y:is_contiguous({ memory_format = tide.contiguous_format }))
        assert.is_false(y:is_contiguous({ memory_format = tide.channels_last }))
        assert.is_true(y:is_contiguous(tide.preserve_format))
        local nhwc = y:permute(1, 3, 4, 2):contiguous():permute(1, 4, 2, 3) -- strides 60,1,15,3
        assert.is_true(nhwc:is_contiguous(tide.channels_last))
        assert.is_false(nhwc:is_contiguous())
        assert.is_true(tide.ones({ 2, 1, 4, 5 }):is_contiguous(tide.channels_last)) -- C = 1
        assert.is_false(x:is_contiguous(tide.channels_last)) -- another rank: false, not an error
        assert.is_true(tide.ones({ 1, 2, 3, 4, 5 }):permute(1, 3, 4, 5, 2):contiguous()
            :permute(1, 5, 2, 3, 4):is_contiguous(tide.channels_last_3d))
        has(err(function() return y:is_contiguous("nchw") end),
            "tide: is_contiguous: memory_format must be \"contiguous_format\"")
        -- the *_like functions take it too (labml_nn's zeros_like(p, memory_format=...))
        local zl = tide.zeros_like(y, { memory_format = tide.channels_last })
        assert.are.same({ 2, 3, 4, 5 }, { zl:size(1), zl:size(2), zl:size(3), zl:size(4) })
        local ol = tide.ones_like(x, { memory_format = tide.preserve_format })
        assert.is_true(ol:eq(1):all():item())
        has(err(function() return tide.zeros_like(x, { memory_format = tide.channels_last }) end),
            "tide: zeros_like: memory_format \"channels_last\" needs a 4-D tensor, got 2-D")
        -- tide.empty(..., memory_format=): PyTorch's names; preserve_format refused as PyTorch's
        local e4 = tide.empty({ 1, 2, 3, 4 }, { memory_format = tide.channels_last })
        assert.are.equal(4, e4:dim())
        assert.are.equal(5, tide.empty(1, 2, 3, 4, 5, { memory_format = "channels_last_3d" }):dim())
        assert.are.equal(2, tide.empty({ 2, 3 }, { memory_format = tide.contiguous_format }):dim())
        has(err(function() return tide.empty({ 2, 3 }, { memory_format = tide.channels_last }) end),
            "tide: empty: memory_format \"channels_last\" needs a 4-D tensor, got 2-D")
        has(err(function() return tide.empty({ 2 }, { memory_format = tide.preserve_format }) end),
            "tide: empty: memory_format \"preserve_format\" is not supported by empty")
        has(err(function() return tide.empty({ 2 }, { memory_format = "nhwc" }) end),
            "tide: empty: memory_format must be \"contiguous_format\"")
        has(err(function() return tide.zeros({ 2 }, { memory_format = "channels_last" }) end),
            "tide: zeros: unknown option \"memory_format\"")
        has(err(function() return x:to("float64", { dtype = "int32" }) end),
            "tide: to: dtype given twice, as argument #2 and by name; pass it once")
        -- PyTorch's positional forms: to(dtype, non_blocking, copy), to(device, dtype,
        -- non_blocking, copy), to(other, non_blocking, copy)
        local f64 = x:to("float64")
        assert.are.equal(f64, f64:to("float64", true))
        assert.are_not.equal(f64, f64:to("float64", false, true))
        assert.are.same(v, f64:to("float64", true, true):tolist())
        assert.are_not.equal(f64, f64:to("float64", true, { copy = true }))
        assert.are.equal("int64", x:to("cpu", "int64", true, false).dtype)
        assert.are.equal(x, x:to("cpu", nil, true))
        assert.are.equal(x, x:to(x:float(), true)) -- x's own device and dtype
        assert.are_not.equal(x, x:to(tide.zeros(1), true, true))
        assert.are.equal("int64", x:to(long({ 1 }), false).dtype)
        has(err(function() return x:to("float64", true, true, true) end),
            "tide: to: after a dtype or a tensor, to takes non_blocking and copy, got three more")
        has(err(function() return x:to("float64", true, 0) end),
            "tide: to: copy must be true or false, got 0")
        has(err(function() return x:to(long({ 1 }), { dtype = "int32" }) end),
            "tide: to: a tensor gives both the device and the dtype")
        has(err(function() return x:to({ copy = 1 }) end), "tide: to: copy must be true or false")
        has(err(function() return x:to({ dtype = "cpu" }) end), "tide: to: unknown dtype cpu")
        has(err(function() return x:to({ dtyp = "float64" }) end),
            "tide: to: unknown option \"dtyp\" (did you mean \"dtype\"?)")
        has(err(function() return x:to("cpu", { device = "cpu" }) end),
            "tide: to: device given twice, as argument #2 and by name; pass it once")
    end)

    it("type, type_as and the casts (memory_format)", function()
        local r = x:type({ dtype = "float64", non_blocking = true })
        assert.are.equal("float64", r.dtype)
        assert.are.equal("int64", x:type("torch.LongTensor", true).dtype)
        assert.are.equal("torch.FloatTensor", x:type())
        has(err(function() return x:type("float64", 1) end),
            "tide: type: non_blocking must be true or false, got 1")
        agree({ { 0, 1, 2 }, { 3, 4, 5 } }, x:type_as({ other = long({ 1 }) }),
            x:type_as(long({ 1 })))
        assert.are.equal("int64", x:type_as({ other = long({ 1 }) }).dtype)
        for name, dt in pairs({ float = "float32", double = "float64", half = "float16",
            bfloat16 = "bfloat16", long = "int64", int = "int32", byte = "uint8",
            bool = "bool" }) do
            local c = x[name](x, { memory_format = "preserve_format" })
            assert.are.equal(dt, c.dtype)
            assert.are.equal(x[name](x).dtype, c.dtype)
        end
        has(err(function() return x:bool({ memory_format = "channels_last" }) end),
            "tide: bool: memory_format \"channels_last\" needs a 4-D tensor")
        has(err(function() return x:float({ dtype = "float64" }) end),
            "tide: float: unknown option \"dtype\"")
    end)

    it("clone and contiguous (memory_format)", function()
        local v = { { 0, 1, 2 }, { 3, 4, 5 } }
        agree(v, x:clone({ memory_format = "contiguous_format" }), x:clone())
        agree(v, tide.clone(x, { memory_format = "preserve_format" }), tide.clone(x))
        agree(v, tide.clone({ input = x }), x)
        agree({ { 0, 3 }, { 1, 4 }, { 2, 5 } },
            x:t():contiguous({ memory_format = "contiguous_format" }), x:t():contiguous())
        has(err(function() return x:clone({ memory_format = "channels_last_3d" }) end),
            "tide: clone: memory_format \"channels_last_3d\" needs a 5-D tensor, got 2-D")
        has(err(function() return x:contiguous({ memory_format = true }) end),
            "tide: contiguous: memory_format must be")
        -- x.contiguous(torch.contiguous_format), by position
        agree({ { 0, 3 }, { 1, 4 }, { 2, 5 } }, x:t():contiguous("contiguous_format"),
            x:t():contiguous())
        has(err(function() return x:contiguous("nchw") end),
            "tide: contiguous: memory_format must be")
    end)

    it("cuda and cpu (non_blocking, memory_format)", function()
        assert.are.equal(x, x:cpu({ memory_format = "preserve_format" }))
        has(err(function() return x:cpu({ memory_format = "channels_last" }) end),
            "tide: cpu: memory_format \"channels_last\" needs a 4-D tensor, got 2-D")
        has(err(function() return x:cpu(true) end), "tide: cpu: expected at most 1 argument")
        -- checked before the device is looked for, so without CUDA too
        has(err(function() return x:cuda(0, 1) end),
            "tide: cuda: non_blocking must be true or false, got 1")
        has(err(function() return x:cuda(0, { memory_format = "x" }) end),
            "tide: cuda: memory_format must be")
        has(err(function() return x:cuda({ devic = 0 }) end),
            "tide: cuda: unknown option \"devic\" (did you mean \"device\"?)")
    end)

    it("views and shapes: view_as, reshape_as, expand_as, expand, tile, reshape, view", function()
        local y = tide.zeros(3, 2)
        local v32 = { { 0, 1 }, { 2, 3 }, { 4, 5 } }
        agree(v32, x:view_as({ other = y }), x:view_as(y))
        agree(v32, x:reshape_as({ other = y }), x:reshape_as(y))
        local e = { { { 0, 1, 2 }, { 3, 4, 5 } }, { { 0, 1, 2 }, { 3, 4, 5 } } }
        agree(e, x:expand_as({ other = tide.zeros(2, 2, 3) }), x:expand_as(tide.zeros(2, 2, 3)))
        agree(e, x:expand({ size = { 2, 2, 3 } }), x:expand(2, 2, 3))
        -- x.tile(dims=(1, 2)), torch.tile(x, dims=(2,))
        local tiled = { { 0, 1, 2, 0, 1, 2 }, { 3, 4, 5, 3, 4, 5 } }
        agree(tiled, x:tile({ dims = { 1, 2 } }), x:tile(1, 2))
        agree(tiled, tide.tile(x, { dims = { 2 } }), tide.tile(x, { 2 }))
        agree(v32, x:reshape({ shape = { 3, 2 } }), x:reshape(3, 2))
        agree({ 0, 1, 2, 3, 4, 5 }, tide.reshape({ input = x, shape = { -1 } }),
            tide.reshape(x, { 6 }))
        agree(v32, x:view({ size = { 3, 2 } }), x:view(3, 2))
        -- x.view(dtype=torch.int32): the bits of float 0..5 (x is float32 here)
        assert.are.same({ 0, 1065353216, 1073741824 },
            x:float():view({ dtype = "int32" })[1]:totable())
        has(err(function() return x:view({ size = { 6 }, dtype = "int32" }) end),
            "tide: view: give sizes or a dtype, not both")
    end)

    it("as_strided", function()
        -- x.as_strided(size=(2, 2), stride=(1, 2), storage_offset=1); torch.as_strided(x, (2, 2),
        -- stride=(1, 2))
        agree({ { 1, 3 }, { 2, 4 } }, x:as_strided({ size = { 2, 2 }, stride = { 1, 2 },
            storage_offset = 1 }), x:as_strided({ 2, 2 }, { 1, 2 }, 1))
        agree({ { 0, 2 }, { 1, 3 } }, tide.as_strided(x, { 2, 2 }, { stride = { 1, 2 } }),
            tide.as_strided(x, { 2, 2 }, { 1, 2 }))
        local a = X()
        a:as_strided_({ size = { 2 }, stride = { 3 } })
        assert.are.same({ 0, 3 }, a:tolist())
    end)

    it("index_put, index_put_, masked_select, masked_scatter, put, put_, take", function()
        -- x.index_put_((tensor([0, 0]),), tensor(5.), accumulate=True)
        local acc = { { 10, 11, 12 }, { 3, 4, 5 } }
        local a, b = X(), X()
        a:index_put_({ long({ 1, 1 }) }, tide.tensor(5):float(), { accumulate = true })
        b:index_put_({ long({ 1, 1 }) }, tide.tensor(5):float(), true)
        agree(acc, a, b)
        agree({ { 9, 9, 9 }, { 3, 4, 5 } },
            x:index_put({ indices = { long({ 1 }) }, values = tide.tensor(9):float() }),
            x:index_put({ long({ 1 }) }, tide.tensor(9):float()))
        agree({ 3, 4, 5 }, x:masked_select({ mask = x:gt(2) }), x:masked_select(x:gt(2)))
        agree({ 3, 4, 5 }, tide.masked_select(x, { mask = x:gt(2) }),
            tide.masked_select(x, x:gt(2)))
        -- x.masked_scatter(x > 2, source=tensor([7., 8., 9.]))
        local src = tide.tensor({ 7, 8, 9 }):float()
        local ms = { { 0, 1, 2 }, { 7, 8, 9 } }
        agree(ms, x:masked_scatter(x:gt(2), { source = src }), x:masked_scatter(x:gt(2), src))
        agree(ms, tide.masked_scatter(x, { mask = x:gt(2), source = src }),
            tide.masked_scatter(x, x:gt(2), src))
        a = X()
        a:masked_scatter_({ mask = x:gt(2), source = src })
        assert.are.same(ms, a:tolist())
        -- x.put(tensor([0, 0]), tensor([1., 2.]), accumulate=True)
        local ones = tide.tensor({ 1, 2 }):float()
        local put = { { 3, 1, 2 }, { 3, 4, 5 } }
        agree(put, x:put(long({ 1, 1 }), ones, { accumulate = true }),
            x:put(long({ 1, 1 }), ones, true))
        agree(put, tide.put(x, { index = long({ 1, 1 }), source = ones, accumulate = true }),
            tide.put(x, long({ 1, 1 }), ones, true))
        a = X()
        a:put_({ index = long({ 6 }), source = tide.tensor({ 9 }):float() })
        assert.are.same({ { 0, 1, 2 }, { 3, 4, 9 } }, a:tolist())
        -- x.take(index=tensor([1, 5]))
        agree({ 1, 5 }, x:take({ index = long({ 2, 6 }) }), x:take(long({ 2, 6 })))
        agree({ 1, 5 }, tide.take({ input = x, index = long({ 2, 6 }) }),
            tide.take(x, long({ 2, 6 })))
    end)

    it("fill_diagonal_ (fill_value, wrap by name or by position)", function()
        -- torch.zeros(5, 2).fill_diagonal_(1, wrap=True)
        local wrapped = { { 1, 0 }, { 0, 1 }, { 0, 0 }, { 1, 0 }, { 0, 1 } }
        local a, b, c = tide.zeros(5, 2), tide.zeros(5, 2), tide.zeros(5, 2)
        a:fill_diagonal_(1, { wrap = true })
        b:fill_diagonal_(1, true)
        c:fill_diagonal_({ fill_value = 1, wrap = true })
        agree(wrapped, a, b)
        assert.are.same(wrapped, c:tolist())
        a = tide.zeros(5, 2)
        a:fill_diagonal_(2, false)
        assert.are.same({ { 2, 0 }, { 0, 2 }, { 0, 0 }, { 0, 0 }, { 0, 0 } }, a:tolist())
        a = tide.zeros(5, 2)
        has(err(function() return a:fill_diagonal_(2, 1) end),
            "tide: fill_diagonal_: wrap must be true or false, got 1")
        assert.are.equal(0, a:sum():item()) -- left unchanged
        has(err(function() return a:fill_diagonal_(2, true, { wrap = true }) end),
            "tide: fill_diagonal_: wrap given twice, as argument #3 and by name; pass it once")
    end)

    it("renorm", function()
        -- x.renorm(p=2, dim=0, maxnorm=1); torch.renorm(x, 1, dim=1, maxnorm=5)
        close({ { 0, 0.4472136, 0.8944272 }, { 0.4242641, 0.5656854, 0.7071068 } },
            x:renorm({ p = 2, dim = 1, maxnorm = 1 }))
        close({ { 0, 0.4472136, 0.8944272 }, { 0.4242641, 0.5656854, 0.7071068 } },
            x:renorm(2, 1, 1))
        close({ { 0, 1, 1.4285715 }, { 3, 4, 3.5714288 } },
            tide.renorm(x, 1, { dim = 2, maxnorm = 5 }))
        local a = X()
        a:renorm_(1, { dim = 2, maxnorm = 5 })
        close({ { 0, 1, 1.4285715 }, { 3, 4, 3.5714288 } }, a)
    end)

    it("nonzero (as_tuple), unique, unique_consecutive", function()
        local tup = { { 1, 1, 2, 2, 2 }, { 2, 3, 1, 2, 3 } }
        assert.are.same(tup, lists(x:nonzero({ as_tuple = true })))
        assert.are.same(tup, lists(tide.nonzero(x, { as_tuple = true })))
        assert.are.same({ { 1, 2 }, { 1, 3 }, { 2, 1 }, { 2, 2 }, { 2, 3 } },
            lists(x:nonzero({ as_tuple = false })))
        -- torch.tensor([3, 1, 3, 2]).unique(return_inverse=True, return_counts=True):
        -- [1, 2, 3], [2, 0, 2, 1], [1, 1, 2]
        local u = tide.tensor({ 3, 1, 3, 2 })
        local want = { { 1, 2, 3 }, { 3, 1, 3, 2 }, { 1, 1, 2 } }
        assert.are.same(want, lists({ u:unique({ return_inverse = true, return_counts = true }) }))
        assert.are.same(want, lists({ u:unique(true, true, { return_counts = true }) }))
        assert.are.same(want, lists({ u:unique(true, true, true) })) -- all by position
        assert.are.same(want, lists({ tide.unique(u, true, true, true) }))
        assert.are.same({ { 1, 2, 3 }, { 3, 1, 3, 2 } }, lists({ u:unique(true, true) }))
        assert.are.same({ { 1, 2, 3 } }, lists({ u:unique(false) }))
        assert.are.same(want, lists({ tide.unique(u, { sorted = true, return_inverse = true,
            return_counts = true }) }))
        assert.are.same({ { 1, 2, 3 }, { 1, 1, 2 } }, lists({ u:unique({ return_counts = true }) }))
        -- unique(dim=0, return_inverse=True) of [[1, 2], [1, 2], [0, 1]]
        assert.are.same({ { { 0, 1 }, { 1, 2 } }, { 2, 2, 1 } },
            lists({ tide.tensor({ { 1, 2 }, { 1, 2 }, { 0, 1 } }):unique({ dim = 1,
                return_inverse = true }) }))
        -- torch.unique_consecutive([1, 1, 2, 2, 3, 1], return_inverse=True, return_counts=True)
        local c = tide.tensor({ 1, 1, 2, 2, 3, 1 })
        local cwant = { { 1, 2, 3, 1 }, { 1, 1, 2, 2, 3, 4 }, { 2, 2, 1, 1 } }
        assert.are.same(cwant, lists({ c:unique_consecutive({ return_inverse = true,
            return_counts = true }) }))
        assert.are.same(cwant,
            lists({ tide.unique_consecutive(c, true, { return_counts = true }) }))
        assert.are.same(cwant, lists({ c:unique_consecutive(true, true) }))
        assert.are.same({ { 1, 2, 3, 1 }, { 2, 2, 1, 1 } },
            lists({ c:unique_consecutive(false, true, 1) }))
        has(err(function() return u:unique({ return_count = true }) end),
            "tide: unique: unknown option \"return_count\" (did you mean \"return_counts\"?)")
        has(err(function() return u:unique(true, { sorted = true }) end),
            "tide: unique: sorted given twice, as argument #2 and by name; pass it once")
    end)

    it("the in-place random fills take PyTorch's names", function()
        local function same(kw, pos)
            tide.manual_seed(7)
            local a = kw(tide.zeros(64))
            tide.manual_seed(7)
            local b = pos(tide.zeros(64))
            assert.are.same(b:tolist(), a:tolist())
            return a
        end
        local a = same(function(t) return t:uniform_({ from = -0.1, to = 0.1 }) end,
            function(t) return t:uniform_(-0.1, 0.1) end)
        assert.is_true(a:min():item() >= -0.1 and a:max():item() < 0.1)
        a = same(function(t) return t:uniform_({ to = 3 }) end,
            function(t) return t:uniform_(0, 3) end)
        assert.is_true(a:max():item() > 1)
        same(function(t) return t:normal_({ mean = 0, std = 0.02 }) end,
            function(t) return t:normal_(0, 0.02) end)
        same(function(t) return t:normal_({ std = 3 }) end, function(t) return t:normal_(0, 3) end)
        a = same(function(t) return t:random_({ from = 3, to = 5 }) end,
            function(t) return t:random_(3, 5) end)
        assert.is_true(a:min():item() >= 3 and a:max():item() <= 4)
        -- x.random_(to=3): from 0
        a = same(function(t) return t:random_({ to = 3 }) end, function(t) return t:random_(3) end)
        assert.is_true(a:min():item() >= 0 and a:max():item() <= 2)
        -- x.random_(from=3) alone: PyTorch 1.13's parser refuses it (no overload takes only from;
        -- Lua cannot write its to=None), where reading it as to = 3 would fill [0, 3) silently
        local t = tide.full({ 4 }, 9)
        local refused, msg = pcall(function() return t:random_({ from = 3 }) end)
        assert.is_false(refused)
        assert.matches("tide: random_: from given by name needs to too, as PyTorch's " ..
            "random_(from, to); write x:random_({from = 3, to = n}) for [3, n), or " ..
            "x:random_(3) for [0, 3)", msg, 1, true)
        assert.are.same({ 9, 9, 9, 9 }, t:tolist())
        local g0 = tide.Generator()
        assert.has_error(function() t:random_({ from = 3, generator = g0 }) end)
        assert.are.same({ 9, 9, 9, 9 }, t:tolist())
        -- a positional to with a generator by name is PyTorch's random_(3, generator=g)
        assert.is_true(tide.zeros(64):random_(3, { generator = g0 }):max():item() <= 2)
        same(function(t) return t:bernoulli_({ p = 0.3 }) end,
            function(t) return t:bernoulli_(0.3) end)
        same(function(t) return t:exponential_({ lambd = 4 }) end,
            function(t) return t:exponential_(4) end)
        same(function(t) return t:geometric_({ p = 0.5 }) end,
            function(t) return t:geometric_(0.5) end)
        same(function(t) return t:log_normal_({ mean = 0, std = 0.5 }) end,
            function(t) return t:log_normal_(0, 0.5) end)
        same(function(t) return t:cauchy_({ median = 7, sigma = 2 }) end,
            function(t) return t:cauchy_(7, 2) end)
        -- a generator by name, with the parameters
        local g = tide.Generator()
        g:manual_seed(3)
        local k = tide.zeros(8):normal_({ mean = 1, generator = g })
        g:manual_seed(3)
        assert.are.same(tide.zeros(8):normal_(1, nil, { generator = g }):tolist(), k:tolist())
        assert.are.same({ 0, 0, 0 }, tide.zeros(3):bernoulli_({ p = 0 }):tolist())
        has(err(function() return tide.zeros(3):uniform_({ a = 0 }) end),
            "tide: uniform_: unknown option \"a\"; options are from, to, generator")
        has(err(function() return tide.zeros(3):uniform_(0, { from = 1 }) end),
            "tide: uniform_: from given twice, as argument #2 and by name; pass it once")
    end)

    it("fill_, copy_, requires_grad_, register_hook", function()
        agree({ 3, 3 }, tide.zeros(2):fill_({ value = 3 }), tide.zeros(2):fill_(3))
        local ones = tide.ones(2, 3)
        agree({ { 1, 1, 1 }, { 1, 1, 1 } }, X():copy_({ src = ones, non_blocking = true }),
            X():copy_(ones))
        assert.are.same({ { 1, 1, 1 }, { 1, 1, 1 } }, X():copy_({ other = tide.ones(3) }):tolist())
        assert.are.same({ { 1, 1, 1 }, { 1, 1, 1 } },
            X():copy_(tide.ones(3), { non_blocking = false }):tolist())
        -- x.copy_(src, True): non_blocking by position
        assert.are.same({ { 1, 1, 1 }, { 1, 1, 1 } }, X():copy_(ones, true):tolist())
        local a = X()
        has(err(function() return a:copy_(ones, { non_blocking = 1 }) end),
            "tide: copy_: non_blocking must be true or false, got 1")
        has(err(function() return a:copy_(ones, "yes") end),
            "tide: copy_: non_blocking must be true or false, got yes")
        assert.are.same({ { 0, 1, 2 }, { 3, 4, 5 } }, a:tolist()) -- left unchanged
        has(err(function() return a:copy_(ones, { other = ones }) end),
            "tide: copy_: other given twice, as src (argument #2) and by name; pass it once")
        assert.is_true(tide.zeros(2):requires_grad_({ requires_grad = true }).requires_grad)
        assert.is_false(tide.zeros(2):requires_grad_({ requires_grad = false }).requires_grad)
        local w = tide.zeros(2):requires_grad_()
        w:register_hook({ hook = function(grad) return grad * 2 end })
        w:sum():backward()
        assert.are.same({ 2, 2 }, w.grad:tolist())
    end)
end)
