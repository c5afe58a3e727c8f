-- legacy_spec.lua — Torch7's and PyTorch's legacy tensor API (tide.legacy): apply_, map_ and
-- map2_ (Torch7's apply, map, map2) calling a Lua function on each element in place, on the
-- host; type() with PyTorch's type names. Values as Torch7 and PyTorch 1.13 give them.
local tide = require("tide")

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

describe("apply_, map_ and map2_ (Torch7's apply, map, map2)", function()
    it("call the function on each element, in place, row-major over the shape", function()
        local y = tide.tensor({ 1.0, 2, 3 })
        assert.are.equal(y, y:apply_(function(v) return v * 2 end))
        assert.are.same({ 2, 4, 6 }, y:totable())
        y:map_(tide.tensor({ 10.0, 20, 30 }), function(a, b) return a + b end)
        assert.are.same({ 12, 24, 36 }, y:totable()) -- PyTorch 1.13: tensor([12., 24., 36.])
        y:map2_(tide.tensor({ 1.0 }), tide.tensor({ 1.0, 2, 3 }), function(a, b, c)
            return a * b * c
        end)
        assert.are.same({ 12, 48, 108 }, y:totable())
        local z = tide.zeros(2, 3):t() -- a transposed view: the logical order, written through
        local k = 0
        z:apply(function() k = k + 1; return k end)
        assert.are.same({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, z:totable())
    end)

    it("keep an element the function returns nil for (Torch7), and keep dtypes", function()
        local i = tide.tensor({ 1, 2, 3 })
        i:apply(function(v) if v ~= 2 then return v * 10 end end)
        assert.are.same({ 10, 2, 30 }, i:totable())
        assert.are.equal("int64", i.dtype)
        local m = tide.tensor({ true, false }, { dtype = "bool" })
        m:map(tide.tensor({ true, true }, { dtype = "bool" }), function(a, b) return a and b end)
        assert.are.same({ true, false }, m:totable())
    end)

    it("refuse a function's bad result, a tensor that needs grad, a device off the host",
        function()
            local y = tide.tensor({ 1.0, 2 })
            assert.matches("tide: apply_: the function returned a string for element 1; return " ..
                "a number (or nil to keep the element)",
                catch(function() y:apply_(function() return "a" end) end), 1, true)
            assert.are.same({ 1, 2 }, y:totable())
            assert.matches("tide: map_: expected a function as the last argument, got number",
                catch(function() y:map_(y, 3) end), 1, true)
            assert.matches("tide: apply_: not differentiable",
                catch(function() tide.zeros(2):requires_grad_(true):apply_(print) end), 1, true)
            local ok, other = pcall(tide.zeros, 2, { device = "cpu:1" })
            if ok then
                assert.matches("tide: apply_: calls a Lua function on each element, which needs " ..
                    "the tensor on the host; it is on cpu:1",
                    catch(function() other:apply_(print) end), 1, true)
            end
            -- an error of the function itself reaches the caller as it is
            assert.matches("mine", catch(function() y:apply_(function() error("mine") end) end),
                1, true)
        end)
end)

describe("type()", function()
    it("names the type as PyTorch, and casts to a named one", function()
        local x = tide.zeros(2, 3)
        assert.are.equal("torch.FloatTensor", x:type())
        assert.are.equal("torch.DoubleTensor", x:double():type())
        assert.are.equal("torch.LongTensor", x:long():type())
        assert.are.equal("torch.IntTensor", x:int():type())
        assert.are.equal("torch.ByteTensor", x:byte():type())
        assert.are.equal("torch.BoolTensor", x:bool():type())
        assert.are.equal("torch.HalfTensor", x:half():type())
        assert.are.equal("torch.BFloat16Tensor", x:bfloat16():type())
        assert.are.equal("int64", x:type("torch.LongTensor").dtype)
        assert.are.equal("float64", x:type("float64").dtype)
        assert.are.equal(x, x:type("torch.FloatTensor")) -- already one: itself
        assert.matches('tide: type: unknown type "torch.Foo"', catch(function()
            return x:type("torch.Foo")
        end), 1, true)
    end)

    it("casts a module's parameters with Module:type, as PyTorch's module.type", function()
        local m = tide.nn.Linear(2, 2)
        assert.are.equal(m, m:type(tide.float64))
        assert.are.equal("float64", m.weight.dtype)
        m:type("torch.FloatTensor")
        assert.are.equal("float32", m.bias.dtype)
        m:type(tide.DoubleTensor)
        assert.are.equal("float64", m.weight.dtype)
        assert.matches("tide: Module:to: expected a floating-point dtype, got int64",
            catch(function() return m:type(tide.long) end), 1, true)
        assert.are.equal("float64", m.weight.dtype)
    end)
end)
