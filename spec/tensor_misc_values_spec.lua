-- Miscellaneous Tensor methods against PyTorch 1.13 (values printed by torch 1.13 on CPU):
-- new_*, type(), dtype queries, sizes and strides, item/tolist, views' data_ptr and offsets,
-- contiguity, clone, repeat/expand/tile, resize_as_, apply_/map_/map2_, equal, #t
local tide = require("tide")

local function f32(v) return tide.tensor(v, { dtype = "float32" }) end
local function i64(v) return tide.tensor(v, { dtype = "int64" }) end
local function err(f)
    local ok, e = pcall(f)
    assert.is_false(ok)
    return tostring(e)
end

describe("tensor misc values (PyTorch 1.13)", function()
    it("new_tensor / new_empty / new_zeros / new_ones / new_full", function()
        local x = f32({ { 1, 2, 3 }, { 4, 5, 6 } })
        local xi = i64({ 1, 2, 3 })
        -- x.new_tensor([1, 2]): float32, requires_grad False
        assert.are.equal("float32", x:new_tensor({ 1, 2 }).dtype)
        assert.is_false(x:new_tensor({ 1, 2 }).requires_grad)
        -- xi.new_tensor([1.5, 2]): int64 [1, 2]
        local t = xi:new_tensor({ 1.5, 2 })
        assert.are.equal("int64", t.dtype)
        assert.are.same({ 1, 2 }, t:tolist())
        assert.is_true(x:new_tensor({ 1, 2 }, { requires_grad = true }).requires_grad)
        assert.are.equal("float64", x:new_tensor({ 1, 2 }, { dtype = "float64" }).dtype)
        -- new_* of a tensor requiring grad: all False
        local xr = tide.ones(2, { requires_grad = true })
        assert.is_false(xr:new_zeros(2).requires_grad)
        assert.is_false(xr:new_ones(2).requires_grad)
        assert.is_false(xr:new_full({ 2 }, 3).requires_grad)
        assert.is_false(xr:new_empty(2).requires_grad)
        local s = f32({ 1, 2 }):requires_grad_()
        local n = x:new_tensor(s) -- (PyTorch warns, as tide) a detached copy
        assert.is_false(n.requires_grad)
        assert.are_not.equal(s:data_ptr(), n:data_ptr())
        assert.are.equal("float32", x:new_tensor(xi).dtype)
        -- {requires_grad = true}: True, a leaf; an int64 one raises
        assert.is_true(x:new_zeros(2, { requires_grad = true }).requires_grad)
        assert.is_true(x:new_empty(2, { requires_grad = true }).requires_grad)
        assert.is_true(x:new_full({ 2 }, 1, { requires_grad = true }).requires_grad)
        assert.is_true(x:new_ones(2, { requires_grad = true }).is_leaf)
        assert.matches("only floating-point tensors can require gradients",
            err(function() return xi:new_zeros(2, { requires_grad = true }) end), 1, true)
        -- xi.new_full((2,), 2.7): [2, 2] int64; bool new_full 2: [True, True]
        assert.are.same({ 2, 2 }, xi:new_full({ 2 }, 2.7):tolist())
        assert.are.equal("int64", xi:new_full({ 2 }, 2.7).dtype)
        assert.are.same({ true, true }, tide.tensor({ true }):new_full({ 2 }, 2):tolist())
        assert.are.same({ 3.5, 3.5 }, x:new_full({ 2 }, tide.tensor(3.5)):tolist())
        assert.are.same({ 2, 3 }, xi:new_zeros(2, 3):size())
        assert.are.equal("int64", xi:new_zeros({ 2, 3 }).dtype)
        assert.are.equal("float64", xi:new_ones({ 2 }, { dtype = "float64" }).dtype)
        assert.are.same({ 0 }, x:new_empty({ 0 }):size())
        assert.are.same({}, x:new_empty({}):size())
        assert.are.same({}, x:new_zeros({}):size())
        assert.matches("tide: ones: size -1", err(function() return x:new_ones(-1) end), 1, true)
        -- the device is inherited, options override it
        local ok, d = pcall(tide.zeros, 2, { device = "cpu:1" })
        if ok then
            for _, m in ipairs({ "new_zeros", "new_ones", "new_empty" }) do
                assert.are.equal("cpu:1", tostring(d[m](d, 1).device))
            end
            assert.are.equal("cpu:1", tostring(d:new_full({ 1 }, 2).device))
            assert.are.equal("cpu:1", tostring(d:new_tensor({ 1 }).device))
            assert.are.equal("cpu", tostring(d:new_zeros(1, { device = "cpu" }).device))
        end
    end)

    it("type(), is_floating_point, is_complex, is_signed, element_size, itemsize, nbytes",
        function()
            -- {dtype: (type(), is_floating_point, is_complex, is_signed, element_size)}
            local want = {
                float32 = { "torch.FloatTensor", true, false, true, 4 },
                float64 = { "torch.DoubleTensor", true, false, true, 8 },
                float16 = { "torch.HalfTensor", true, false, true, 2 },
                bfloat16 = { "torch.BFloat16Tensor", true, false, true, 2 },
                int32 = { "torch.IntTensor", false, false, true, 4 },
                int64 = { "torch.LongTensor", false, false, true, 8 },
                uint8 = { "torch.ByteTensor", false, false, false, 1 },
                bool = { "torch.BoolTensor", false, false, false, 1 },
            }
            for dt, w in pairs(want) do
                local t = tide.zeros(2, { dtype = dt })
                assert.are.same(w, { t:type(), t:is_floating_point(), t:is_complex(),
                    t:is_signed(), t:element_size() })
                assert.are.equal(w[1], tide.typename(t)) -- torch.typename
                -- PyTorch 2's itemsize / nbytes (1.13 has neither): element_size, numel * it
                assert.are.equal(w[5], t.itemsize)
                assert.are.equal(2 * w[5], t.nbytes)
            end
            assert.are.equal("number", tide.typename(3))
            local x = f32({ { 1, 2, 3 }, { 4, 5, 6 } })
            assert.are.same({ 12, 24, 72 }, { x[1].nbytes, x:t().nbytes, x:expand(3, 2, 3).nbytes })
            assert.are.equal("int32", x:type("torch.IntTensor").dtype)
            assert.are.equal("int32", x:type("int32").dtype) -- x.type(torch.int32)
            assert.are.equal(x, x:type("torch.FloatTensor")) -- x itself
            assert.are.equal("torch.DoubleTensor", x:type("float64"):type())
            assert.matches("tide: type: unknown type \"float\"",
                err(function() return x:type("float") end), 1, true)
        end)

    it("numel / nelement / dim / ndimension, size and stride with negative dims", function()
        local x = f32({ { 1, 2, 3 }, { 4, 5, 6 } })
        assert.are.same({ 6, 6, 2, 2, 0, 1, 1 }, { x:numel(), x:nelement(), x:dim(),
            x:ndimension(), tide.tensor(3.5):dim(), tide.tensor(3.5):numel(),
            tide.tensor(5):nelement() })
        local y = tide.zeros(2, 3, 4)
        assert.are.same({ 4, 2, 1, 12 }, { y:size(-1), y:size(-3), y:stride(-1), y:stride(-3) })
        assert.are.same({ 12, 4, 1 }, y:stride())
        assert.are.same({ 2, 3, 4 }, y:size())
        assert.are.same({}, tide.tensor(1.5):stride())
        assert.are.same({}, tide.tensor(1.5):size())
        -- Dimension out of range (expected to be in range of [-3, 2], but got 3)
        assert.matches("tide: size: dim 4 is out of range", err(function() return y:size(4) end),
            1, true)
        assert.matches("tide: size: dim -4 is out of range",
            err(function() return y:size(-4) end), 1, true)
        assert.matches("tide: stride: dim 4 is out of range",
            err(function() return y:stride(4) end), 1, true)
        assert.matches("tide: size: dim 1 is out of range for a tensor with no dims",
            err(function() return tide.tensor(1.5):size(1) end), 1, true)
    end)

    it("item and tolist", function()
        assert.are.same({ 2.5, 7, true }, { f32({ { 2.5 } }):item(), i64({ 7 }):item(),
            tide.tensor({ true }):item() })
        -- only one element tensors can be converted to Python scalars (2 and 0 elements)
        assert.matches("tide: item: the tensor has 2 elements; item() needs exactly one",
            err(function() return f32({ 1, 2 }):item() end), 1, true)
        assert.matches("tide: item: the tensor has 0 elements",
            err(function() return f32({}):item() end), 1, true)
        assert.are.equal(3.5, tide.tensor(3.5):tolist())
        assert.are.same({}, f32({}):tolist())
        assert.are.same({ {}, {} }, tide.zeros(2, 0):tolist())
        assert.are.same({}, tide.zeros(0, 2):tolist())
        assert.are.same({ { 1, 2 }, { 3, 4 } }, i64({ { 1, 2 }, { 3, 4 } }):tolist())
        assert.are.same({ true, false }, tide.tensor({ true, false }):tolist())
    end)

    it("data_ptr and storage_offset of views, is_contiguous, contiguous, clone", function()
        local a = tide.arange(12, { dtype = "float32" }):view(3, 4)
        assert.are.equal(a:data_ptr(), a:view(12):data_ptr())
        assert.are.equal(a:data_ptr(), a:t():data_ptr())
        assert.are.same({ 16, 4 }, { a[2]:data_ptr() - a:data_ptr(),
            a:narrow(2, 2, 2):data_ptr() - a:data_ptr() })
        assert.are.same({ 4, 2, 8, 5, 5 }, { a:narrow(1, 2, 2):storage_offset(),
            a:narrow(2, 3, 2):storage_offset(), a[3]:storage_offset(),
            a[{ { 2, 3 }, { 2, 4 } }]:storage_offset(),
            a[{ { 2, 3 }, { 2, 4 } }]:t():storage_offset() })
        assert.are.same({ false, false, true, true, true, false, true, true, false }, {
            a:t():is_contiguous(), a:expand(2, 3, 4):is_contiguous(),
            tide.zeros(0, 3):t():is_contiguous(), tide.zeros(1, 3):t():is_contiguous(),
            tide.zeros(3, 1):expand(3, 1):is_contiguous(), a[{ {}, 2 }]:is_contiguous(),
            tide.zeros(4, 1):t():is_contiguous(), tide.zeros(3):expand(1, 3):is_contiguous(),
            a[{ {}, { 1, 1 } }]:is_contiguous() })
        assert.are.equal(a, a:contiguous())
        local at = a:t()
        assert.are_not.equal(at, at:contiguous())
        assert.are.same({ 3, 1 }, at:contiguous():stride())
        -- clone of a non-dense or overlapping tensor: contiguous strides (as PyTorch's)
        assert.are.same({ 2, 1 }, a[{ {}, { 1, 4, 2 } }]:clone():stride())
        assert.are.same({ 12, 4, 1 }, a:expand(2, 3, 4):clone():stride())
        assert.are.same({ 1 }, a[{ {}, 2 }]:clone():stride())
        assert.are.same({ 3, 1 }, at:clone({ memory_format = "contiguous_format" }):stride())
        assert.are.same(at:tolist(), at:clone():tolist())
    end)

    pending("clone() of a dense non-contiguous tensor: PyTorch's preserve_format keeps its " ..
        "strides (a:t():clone():stride() is (1, 4), permute(3, 1, 2) of 2x3x4 (1, 12, 4), " ..
        "is_contiguous() false); tide's is contiguous ({3, 1}): clone is C (lua/views.c) " ..
        "and tensor_keywords/tensor_methods.lua, not this audit's files")

    it("repeat vs expand vs tile, resize_as_", function()
        local b = i64({ { 1, 2 }, { 3, 4 } })
        assert.are.same({ { 1, 2 }, { 3, 4 }, { 1, 2 }, { 3, 4 } }, b["repeat"](b, 2, 1):tolist())
        assert.are.same({ 2, 2, 4 }, b["repeat"](b, 2, 1, 2):size())
        assert.are.same({ 0, 2 }, b["repeat"](b, 0, 1):size())
        -- Number of dimensions of repeat dims can not be smaller than number of dimensions
        assert.matches("tide: repeat: 1 repeats for a tensor of 2 dims",
            err(function() return b["repeat"](b, 2) end), 1, true)
        assert.are.same({ { 1, 2, 1, 2 }, { 3, 4, 3, 4 } }, b:tile(2):tolist())
        local v = i64({ 1, 2 })
        assert.are.same({ { 1, 2, 1, 2 }, { 1, 2, 1, 2 } }, v["repeat"](v, 2, 2):tolist())
        assert.are.same({ { 1, 2, 1, 2 }, { 1, 2, 1, 2 } }, v:tile(2, 2):tolist())
        assert.are.same({ { 1, 2 }, { 1, 2 } }, v:expand(2, 2):tolist())
        assert.are.same({ 0, 1 }, v:expand(2, 2):stride())
        local c = i64({ { 1 }, { 2 } })
        assert.are.same({ { 1, 1, 1 }, { 2, 2, 2 } }, c:expand(2, 3):tolist())
        assert.are.same({ { 1, 1, 1 }, { 2, 2, 2 } }, c:expand(-1, 3):tolist())
        assert.matches("tide: expand: cannot expand shape [2] to [3]",
            err(function() return v:expand(3) end), 1, true)
        assert.are.same({ { 0, 1 }, { 2, 3 }, { 4, 5 } },
            tide.arange(6, { dtype = "float32" }):resize_as_(tide.zeros(3, 2)):tolist())
        assert.are.same({ { 0, 1 }, { 2, 3 } },
            tide.arange(6, { dtype = "float32" }):resize_as_(tide.zeros(2, 2)):tolist())
        local t = tide.zeros(6)
        assert.are.equal(t, t:resize_as_(tide.zeros(2, 3)))
        assert.are.same({ 3, 1 }, tide.zeros(6):resize_as_(tide.zeros(3, 2):t()):stride())
        assert.are.same({ { 1, 2 } }, i64({ 1, 2, 3 }):resize_as_(tide.zeros(1, 2)):tolist())
    end)

    it("apply_ / map_ / map2_", function()
        local c = f32({ 1, 2, 3 })
        assert.are.same({ 2, 4, 6 }, c:clone():apply_(function(v) return v * 2 end):tolist())
        local t = c:clone()
        assert.are.equal(t, t:apply_(function(v) return v end))
        assert.are.same({ 11, 22, 33 }, c:clone():map_(f32({ 10, 20, 30 }),
            function(p, q) return p + q end):tolist())
        assert.are.same({ { 1, 2, 3 }, { 1, 2, 3 } }, tide.zeros(2, 3):map_(c,
            function(p, q) return p + q end):tolist())
        assert.are.same({ 2, 6, 12 }, c:clone():map2_(c, c,
            function(p, q, d) return p + q * d end):tolist())
        assert.are.same({ 3, 6 }, i64({ 1, 2 }):apply_(function(v) return v * 3 end):tolist())
        assert.are.same({ 1, 3 }, i64({ 1, 2 }):apply_(function(v) return v * 1.5 end):tolist())
        -- Can't call apply_() on Variable that requires grad. Use var.detach().apply_() instead.
        -- (under no_grad too; map_ and map2_ refuse an argument that requires grad as well)
        local r = tide.ones(2, { requires_grad = true })
        assert.matches("tide: apply_: not differentiable: argument #1 requires grad",
            err(function() return r:apply_(function(v) return v end) end), 1, true)
        assert.matches("tide: apply_: not differentiable: argument #1 requires grad",
            err(function() return tide.no_grad(function()
                return r:apply_(function(v) return v end) end) end), 1, true)
        assert.matches("tide: map_: not differentiable: argument #2 requires grad",
            err(function() return tide.no_grad(function()
                return tide.zeros(2):map_(r, function(p) return p end) end) end), 1, true)
        assert.matches("tide: map2_: not differentiable: argument #3 requires grad",
            err(function() return tide.zeros(2):map2_(tide.zeros(2), r,
                function(p) return p end) end), 1, true)
        assert.are.same({ 1, 1 }, r:tolist())
    end)

    it("equal, is_same_size, #t, is_nonzero", function()
        assert.are.same({ true, false, false, false, true, false, true, false }, {
            tide.equal(i64({ 1, 2 }), f32({ 1, 2 })), i64({ 1, 2 }):equal(i64({ 1, 2, 3 })),
            i64({ 1, 2 }):equal(i64({ { 1, 2 } })), f32({ 1, 0 / 0 }):equal(f32({ 1, 0 / 0 })),
            tide.zeros(0):equal(tide.zeros(0)), tide.zeros(0):equal(tide.zeros(0, 1)),
            tide.tensor({ true, false }):equal(i64({ 1, 0 })),
            tide.tensor(1.5):equal(f32({ 1.5 })) })
        local x = f32({ { 1, 2, 3 }, { 4, 5, 6 } })
        assert.are.same({ true, false, true }, { x:is_same_size(tide.zeros(2, 3,
            { dtype = "int64" })), x:is_same_size(tide.zeros(3, 2)),
            tide.is_same_size(tide.tensor(1.5), tide.tensor(2.5)) })
        do
            assert.are.same({ 2, 0, 5 }, { #x, #tide.zeros(0, 3), #tide.zeros(5) })
            -- TypeError: len() of a 0-d tensor
            assert.matches("tide: len: a 0-dim tensor has no length",
                err(function() return #tide.tensor(1.5) end), 1, true)
        end
        -- bool(t) / t.is_nonzero(): one element's truth; more or none raise
        assert.are.same({ false, true, true }, { f32({ 0 }):is_nonzero(),
            i64({ { 3 } }):is_nonzero(), tide.tensor(true):is_nonzero() })
        assert.matches("tide: is_nonzero: needs a tensor of one element, got 2",
            err(function() return i64({ 1, 2 }):is_nonzero() end), 1, true)
        assert.matches("tide: is_nonzero: needs a tensor of one element, got 0",
            err(function() return f32({}):is_nonzero() end), 1, true)
    end)
end)
