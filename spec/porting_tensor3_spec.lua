-- porting_tensor3_spec.lua — PyTorch-porting gaps of tensors (/tmp/porting/gaps.md 5, 11, 12,
-- 13 and the notes): slices with a step, tide.tensor of 0-d tensors, 0-d tensors as scalar
-- arguments, the legacy constructors (tide.Tensor(4, 3), tide.LongTensor ...), add/sub's
-- {alpha =} and nan_to_num's positional form. PyTorch 1.13's values are written in with the
-- expression that gave them.
local tide = require("tide")

local T = tide.tensor

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return err
end

-- err without its position
local function msg(err)
    return (tostring(err):gsub("^.-:%d+: ", ""))
end

local function near(expected, got, tol)
    tol = tol or 1e-6
    assert.are.equal(#expected, #got)
    for i = 1, #expected do
        if type(expected[i]) == "table" then
            near(expected[i], got[i], tol)
        else
            assert(math.abs(expected[i] - got[i]) <= tol,
                ("element %d: expected %s, got %s"):format(i, expected[i], got[i]))
        end
    end
end

describe("slices with a step, {first, last, step}", function()
    it("reads every step-th position, as PyTorch's x[a-1:b:step]", function()
        local x = tide.arange(1, 11)
        assert.are.same({ 2, 5, 8 }, x[{ { 2, 9, 3 } }]:totable()) -- x[1:9:3]
        assert.are.same({ 8, 10 }, x[{ { -3, -1, 2 } }]:totable()) -- x[-3::2]
        assert.are.same({ 1, 5, 9 }, x[{ { 1, -1, 4 } }]:totable()) -- x[0::4]
        -- step 1 is the range itself
        assert.are.same(x[{ { 2, 5 } }]:totable(), x[{ { 2, 5, 1 } }]:totable())
    end)

    it("is a view of the same storage, PyTorch's strides and offset", function()
        local m = tide.arange(1, 13):reshape(3, 4)
        local v = m[{ { 1, -1, 2 }, { 2, -1, 2 } }]
        assert.are.same({ { 2, 4 }, { 10, 12 } }, v:totable()) -- m[0::2, 1::2]
        assert.are.same({ 8, 2 }, v:stride()) -- m[0::2, 1::2].stride()
        assert.are.equal(1, v:storage_offset())
        v:fill_(0)
        assert.are.same({ { 1, 0, 3, 0 }, { 5, 6, 7, 8 }, { 9, 0, 11, 0 } }, m:totable())
    end)

    it("is a write target: the positional encoding's pe[:, 0::2] = sin(...)", function()
        local pe = tide.zeros(3, 6)
        local pos = tide.arange(0, 3):float():unsqueeze(2)
        pe[{ {}, { 1, -1, 2 } }] = tide.sin(pos * tide.ones(3))
        pe[{ {}, { 2, -1, 2 } }] = tide.cos(pos * tide.ones(3))
        -- pe[:, 0::2] = torch.sin(pos * torch.ones(3)); pe[:, 1::2] = torch.cos(...)
        near({ { 0.0, 1.0, 0.0, 1.0, 0.0, 1.0 },
            { 0.8414709568023682, 0.5403023362159729, 0.8414709568023682, 0.5403023362159729,
                0.8414709568023682, 0.5403023362159729 },
            { 0.9092974066734314, -0.416146844625473, 0.9092974066734314, -0.416146844625473,
                0.9092974066734314, -0.416146844625473 } }, pe:totable())
        local x = tide.zeros(5)
        x[{ { 2, 5, 2 } }] = 7 -- a number fills
        assert.are.same({ 0, 7, 0, 7, 0 }, x:totable())
    end)

    it("carries gradients to the picked positions, reading and writing", function()
        local w = tide.ones(6, { requires_grad = true })
        local picked = (w * 2)[{ { 1, -1, 2 } }]
        picked:sum():backward()
        assert.are.same({ 2, 0, 2, 0, 2, 0 }, w.grad:totable())
        local u = tide.ones(3, { requires_grad = true })
        local y = tide.zeros(6) * 1
        y[{ { 2, 6, 2 } }] = u * 3
        local weighted = y * tide.arange(1, 7)
        weighted:sum():backward()
        assert.are.same({ 6, 12, 18 }, u.grad:totable())
    end)

    it("refuses a step < 1, a fractional one and a fourth entry", function()
        local x = tide.arange(1, 11)
        assert.are.equal("tide: index: the step of the range for dim 1 is 0; a step must be " ..
            ">= 1 (as PyTorch's; flip the tensor to go backwards)",
            msg(catch(function() return x[{ { 1, 5, 0 } }] end)))
        assert.are.equal("tide: setindex: the step of the range for dim 1 is -1; a step must " ..
            "be >= 1 (as PyTorch's; flip the tensor to go backwards)",
            msg(catch(function() x[{ { 1, 5, -1 } }] = 1 end)))
        assert.are.equal("tide: index: the range for dim 1 must hold integers, got 1.5",
            msg(catch(function() return x[{ { 1, 5, 1.5 } }] end)))
        assert.are.equal("tide: index: the range for dim 2 has 4 entries; write {first, last}, " ..
            "{first, last, step}, {i} or {}",
            msg(catch(function() return tide.zeros(2, 3)[{ {}, { 1, 2, 1, 1 } }] end)))
        assert.are.same({ 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 }, x:totable())
    end)

    it("clamp their ends to the dim, as Python's slices do", function()
        -- PyTorch 1.13, x = torch.arange(1., 11.): x[0:11:2], x[-20:], x[8:20], then empty:
        -- x[10:20], x[5:5], x[11:20:3], x[2:1]
        local x = tide.arange(1, 11, { dtype = "float32" })
        assert.are.same({ 1, 3, 5, 7, 9 }, x[{ { 1, 11, 2 } }]:totable())
        assert.are.same({ 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 }, x[{ { -20, -1 } }]:totable())
        assert.are.same({ 9, 10 }, x[{ { 9, 20 } }]:totable())
        for _, r in ipairs({ { 11, 20 }, { 6, 5 }, { 12, 20, 3 }, { 3, 1 } }) do
            local e = x[{ r }]
            assert.are.same({ 1, 0 }, { e:dim(), e:numel() }, "{" .. table.concat(r, ", ") .. "}")
        end
        -- a generate loop's idx[:, -block_size:] on a context shorter than block_size
        local idx = tide.tensor({ { 5, 6, 7 } })
        assert.are.same({ { 5, 6, 7 } }, idx[{ {}, { -8, -1 } }]:totable())
        -- writes clamp alike (x[8:20] = 0): a view, so x changes
        x[{ { 9, 20 } }] = 0
        assert.are.same({ 1, 2, 3, 4, 5, 6, 7, 8, 0, 0 }, x:totable())
        local y = tide.zeros(3, 3)
        y[{ { 2, 10 }, { 2, 10 } }] = tide.ones(2, 2)
        assert.are.same({ { 0, 0, 0 }, { 0, 1, 1 }, { 0, 1, 1 } }, y:totable())
    end)
end)

describe("tide.tensor of tensors", function()
    it("takes the values of 0-d and one-element tensors", function()
        local R = T({ 1.5, 2.5 })[2]
        local t = T({ R })
        assert.are.same({ 2.5 }, t:totable()) -- torch.tensor([R])
        assert.are.equal("float32", t.dtype)
        assert.are.same({ 1, 2 }, T({ T(1.0), T(2.0) }):totable())
        assert.are.same({ { 1 }, { 2 } }, T({ { T(1) }, { T(2) } }):totable())
        assert.are.same({ 1 }, T({ T({ 1.0 }) }):totable()) -- torch.tensor([tensor([1.])])
        assert.are.same({ 1, 2.5 }, T({ 1, T(2.5) }):totable())
    end)

    it("infers PyTorch's dtype: the elements' dtypes and kinds promoted #lua53", function()
        assert.are.equal("float32", T({ T(1.0) }).dtype)
        assert.are.equal("float64", T({ T(1.0, { dtype = "float64" }) }).dtype)
        assert.are.equal("int32", T({ T(1, { dtype = "int32" }) }).dtype)
        assert.are.equal("bool", T({ T(true) }).dtype)
        -- torch.tensor([tensor(1, dtype=int32), 2]).dtype -> int64
        assert.are.equal("int64", T({ T(1, { dtype = "int32" }), 2 }).dtype)
        -- torch.tensor([tensor(1, dtype=int32), 2.5]).dtype -> float32
        assert.are.equal("float32", T({ T(1, { dtype = "int32" }), 2.5 }).dtype)
        -- torch.tensor([tensor(1., dtype=float64), 2]).dtype -> float64
        assert.are.equal("float64", T({ T(1.0, { dtype = "float64" }), 2 }).dtype)
        -- torch.tensor([tensor(1., dtype=float16), 2.]).dtype -> float32
        assert.are.equal("float32", T({ T(1.0, { dtype = "float16" }), 2.0 }).dtype)
        -- torch.tensor([tensor(1., dtype=float16), tensor(2, dtype=int32)]).dtype -> float16
        assert.are.equal("float16",
            T({ T(1.0, { dtype = "float16" }), T(2, { dtype = "int32" }) }).dtype)
        -- torch.tensor([tensor(True), 1]) -> tensor([1, 1])
        local b = T({ T(true), 1 })
        assert.are.equal("int64", b.dtype)
        assert.are.same({ 1, 1 }, b:totable())
        local given = T({ T(1.7), T(2) }, { dtype = "int64" })
        assert.are.same({ 1, 2 }, given:totable())
        assert.are.same({ true, false }, T({ T(3), T(0) }, { dtype = "bool" }):totable())
    end)

    it("copies a tensor given whole, detached (torch.tensor(t))", function()
        local src = T({ 1.0, 2.0 }, { requires_grad = true })
        local c = T(src)
        assert.are.same({ 1, 2 }, c:totable())
        assert.is_false(c.requires_grad)
        assert.are_not.equal(src:data_ptr(), c:data_ptr())
        assert.are.equal("float64", T(T(2.5), { dtype = "float64" }).dtype)
    end)

    it("refuses a tensor of more elements, naming tide.stack", function()
        assert.are.equal("tide: tensor: an element is a tensor of shape {2}; only one-element " ..
            "tensors convert to numbers: combine tensors with tide.stack or tide.cat",
            msg(catch(function() return T({ T({ 1.0, 2.0 }) }) end)))
        assert.matches("porting_tensor3_spec.lua:%d+: tide: tensor: the nested table is ragged",
            catch(function() return T({ T(1.0), { 2 } }) end))
    end)
end)

describe("0-d tensors as scalar arguments", function()
    it("fill_ takes one, converted to the tensor's dtype, its gradient the sum", function()
        -- torch.zeros(1, 1, dtype=torch.int64).fill_(torch.tensor(3))
        assert.are.same({ { 3 } }, tide.zeros(1, 1, { dtype = "int64" }):fill_(T(3)):totable())
        -- torch.zeros(2, dtype=torch.int64).fill_(torch.tensor(2.7)) -> [2, 2]
        assert.are.same({ 2, 2 }, tide.zeros(2, { dtype = "int64" }):fill_(T(2.7)):totable())
        local v = T(2.0, { requires_grad = true })
        local y = tide.zeros(3):fill_(v)
        assert.are.same({ 2, 2, 2 }, y:totable())
        local weighted = y * T({ 1.0, 2.0, 3.0 })
        weighted:sum():backward()
        assert.are.equal(6, v.grad:item())
        -- PyTorch refuses a 1-d value: fill_ only supports 0-dimension value tensor
        assert.are.equal("tide: fill_: value must be a number, got a tensor of 1 dims; a 0-d " ..
            "tensor works too: pass value:reshape({}) or value:item()",
            msg(catch(function() return tide.zeros(2):fill_(T({ 3.0 })) end)))
    end)

    it("tide.full, full_like and new_full take one as the value", function()
        assert.are.same({ 3, 3 }, tide.full({ 2 }, T(3.0)):totable())
        local i = tide.full(2, 2, T(3))
        assert.are.same({ { 3, 3 }, { 3, 3 } }, i:totable())
        assert.are.equal("int64", i.dtype) -- torch.full((2,), torch.tensor(3)).dtype
        assert.are.equal("bool", tide.full({ 2 }, T(true)).dtype)
        assert.are.same({ 3, 3 }, tide.full_like(tide.zeros(2), T(3.0)):totable())
        -- torch.full_like(torch.zeros(2, dtype=torch.int64), torch.tensor(3.7)) -> [3, 3]
        local long = tide.zeros(2, { dtype = "int64" })
        assert.are.same({ 3, 3 }, tide.full_like(long, T(3.7)):totable())
        assert.are.same({ 4, 4 }, tide.zeros(1):new_full({ 2 }, T(4.0)):totable())
        assert.are.equal("tide: full: the fill value must be a number, a boolean or a 0-d " ..
            "tensor, got a tensor of shape {1}",
            msg(catch(function() return tide.full({ 2 }, T({ 1.0 })) end)))
    end)

    it("clamp takes tensor bounds as PyTorch 1.13 (broadcast, NaN kept)", function()
        -- torch.tensor([0.5, 2.5, 9.]).clamp(torch.tensor(1.), torch.tensor(6.))
        assert.are.same({ 1, 2.5, 6 }, T({ 0.5, 2.5, 9.0 }):clamp(T(1.0), T(6.0)):totable())
        assert.are.same({ 2, 5, 6 }, tide.clamp(T({ 1.0, 5.0, 9.0 }), T(2.0), 6):totable())
        local below = T({ 1.0, 5.0, 9.0 }):clamp(nil, T({ 6.0, 4.0, 8.0 }))
        assert.are.same({ 1, 4, 8 }, below:totable())
        assert.are.same({ 2, 5 }, T({ 1.0, 5.0 }):clip(T(2.0)):totable())
        -- min > max: max wins, torch.tensor([1., 5., 9.]).clamp(tensor([8.]), tensor([2.]))
        assert.are.same({ 2, 2, 2 }, T({ 1.0, 5.0, 9.0 }):clamp(T({ 8.0 }), T({ 2.0 })):totable())
        local n = 0 / 0
        local r = T({ 1.0, n, 3.0 }):clamp(T({ n, 0.0, 2.0 }), T({ 5.0, 5.0, n })):totable()
        for k = 1, 3 do
            assert.is_true(r[k] ~= r[k]) -- tensor([nan, nan, nan])
        end
        -- an integer tensor with a float bound: float32, [2.5, 5, 9]
        local f = T({ 1, 5, 9 }):clamp(T(2.5))
        assert.are.equal("float32", f.dtype)
        assert.are.same({ 2.5, 5, 9 }, f:totable())
    end)

    it("clamp's gradient goes to x within its bounds (ties too) and to the bound taken", function()
        local x = T({ 1.0, 2.0, 3.0 }, { requires_grad = true })
        local lo = T({ 1.0, 3.0, 0.0 }, { requires_grad = true })
        local hi = T({ 4.0, 4.0, 3.0 }, { requires_grad = true })
        x:clamp(lo, hi):sum():backward()
        -- PyTorch: x.grad [1, 0, 1], lo.grad [0, 1, 0], hi.grad [0, 0, 0]
        assert.are.same({ 1, 0, 1 }, x.grad:totable())
        assert.are.same({ 0, 1, 0 }, lo.grad:totable())
        assert.are.same({ 0, 0, 0 }, hi.grad:totable())
    end)

    it("clamp_ writes tensor bounds in place; refuses a larger shape or a truncation", function()
        local y = T({ 1.0, 5.0, 9.0 })
        assert.are.equal(y, y:clamp_(T(2.0), T(6.0)))
        assert.are.same({ 2, 5, 6 }, y:totable())
        assert.are.equal("tide: clamp_: the bounds broadcast the result to {2, 3}, the tensor " ..
            "is {3}; an in-place clamp keeps the tensor's shape",
            msg(catch(function() return y:clamp_(T({ { 2.0 }, { 3.0 } })) end)))
        local i = T({ 1, 2 })
        assert.are.equal("tide: clamp_: the result is float32, which an in-place write into the " ..
            "int64 tensor would truncate; use clamp, or convert the bounds",
            msg(catch(function() return i:clamp_(T(1.5)) end)))
        assert.are.same({ 1, 2 }, i:totable())
        -- a larger tensor beside a number: PyTorch has no such overload
        assert.matches("porting_tensor3_spec.lua:%d+: tide: clamp: min must be a number, got a " ..
            "tensor of shape {1}", catch(function() return y:clamp(T({ 0.0 }), 2) end))
        assert.are.same({ 2, 5, 6 }, y:totable())
        -- what the ops inside refuse is named clamp's (or clamp_'s)
        assert.matches("^tide: clamp: shapes %[3%] and %[2%] cannot be broadcast",
            msg(catch(function() return y:clamp(T({ 0.0, 1.0 }), T(9.0)) end)))
        local leaf = T({ 1.0, 2.0 }, { requires_grad = true })
        assert.matches("^tide: clamp_: in%-place operation on a leaf tensor that requires grad",
            msg(catch(function() return leaf:clamp_(T(1.5), T(1.8)) end)))
        assert.are.same({ 1, 2 }, leaf:detach():totable())
    end)

    it("addcmul's value and add's alpha take one", function()
        -- torch.tensor([0.]).addcmul(tensor([2.]), tensor([3.]), value=tensor(2.)) -> [12.]
        local r = T({ 0.0 }):addcmul(T({ 2.0 }), T({ 3.0 }), { value = T(2.0) })
        assert.are.same({ 12 }, r:totable())
        -- torch.add(tensor([1.]), tensor([1.]), alpha=tensor(2.)) -> [3.]
        assert.are.same({ 3 }, T({ 1.0 }):add(T({ 1.0 }), T(2.0)):totable())
        assert.are.same({ 3 }, T({ 1.0 }):add(T({ 1.0 }), { alpha = T(2) }):totable())
    end)
end)

describe("PyTorch 1.13's deprecated value-first overloads", function()
    it("addcmul(value, t1, t2) and addcdiv(value, t1, t2), as old optimizers write them", function()
        local warn = require("tide._warn")
        local lines, real = {}, io.stderr
        io.stderr = { write = function(_, s) lines[#lines + 1] = s end } -- luacheck: ignore
        warn.reset("legacy_value.addcmul")
        warn.reset("legacy_value.addcdiv")
        local g = tide.full({ 3 }, 2, { dtype = "float32" })
        -- torch.ones(3).addcmul_(0.5, g, g): [3, 3, 3]; .addcdiv_(-0.5, g, g + 2): [0.75, ...];
        -- torch.addcmul(torch.ones(3), 2, g, g): [9, 9, 9]
        local ok, err = pcall(function()
            local a = tide.ones(3)
            assert.are.equal(a, a:addcmul_(0.5, g, g))
            assert.are.same({ 3, 3, 3 }, a:totable())
            assert.are.same({ 0.75, 0.75, 0.75 }, tide.ones(3):addcdiv_(-0.5, g, g + 2):totable())
            assert.are.same({ 9, 9, 9 }, tide.addcmul(tide.ones(3), 2, g, g):totable())
            -- the exp_avg_sq line of a hand-written Adam, with grad requiring grad
            local w = tide.tensor({ 1.0, -2.0 }, { requires_grad = true, dtype = "float64" })
            local y = tide.zeros(2, { dtype = "float64" }):addcmul(0.25, w, w)
            y:sum():backward()
            assert.are.same({ 0.5, -1 }, w.grad:totable())
        end)
        io.stderr = real -- luacheck: ignore
        assert(ok, err)
        local text = table.concat(lines)
        assert.is_truthy(text:find("tide: warning: This overload of addcmul is deprecated: " ..
            "addcmul(Number value, Tensor tensor1, Tensor tensor2). Consider using one of the " ..
            "following signatures instead: addcmul(Tensor tensor1, Tensor tensor2, *, Number " ..
            "value)", 1, true))
        assert.is_truthy(text:find("This overload of addcdiv is deprecated", 1, true))
        local _, n = text:gsub("This overload of addcmul", "")
        assert.are.equal(1, n) -- once
    end)
end)

describe("legacy constructors", function()
    it("tide.Tensor(sizes) is tide.empty's, of the default float dtype", function()
        local t = tide.Tensor(4, 3)
        assert.are.same({ 4, 3 }, t:size())
        assert.are.equal("float32", t.dtype)
        assert.are.same({ 0 }, tide.Tensor():size())
        tide.set_default_dtype("float64")
        local d = tide.Tensor(2)
        tide.set_default_dtype("float32")
        assert.are.equal("float64", d.dtype)
        assert.are.equal("cpu", tostring(tide.Tensor(2, { device = "cpu" }).device))
    end)

    it("tide.Tensor(data) copies a nested table, 0-d tensors among it too", function()
        local t = tide.Tensor({ { 1, 2 } })
        assert.are.equal("float32", t.dtype)
        assert.are.same({ { 1, 2 } }, t:totable())
        -- torch.Tensor([[word_idx]]).long(), word_idx a 0-d tensor
        local w = tide.Tensor({ { T(7) } }):long()
        assert.are.same({ { 7 } }, w:totable())
        assert.are.equal("int64", w.dtype)
    end)

    it("keeps tide.Tensor the method table", function()
        assert.is_function(tide.Tensor.add)
        assert.are.equal(tide.core.Tensor, tide.Tensor)
        assert.are.equal(tide.Tensor.add, tide.zeros(1).add)
    end)

    it("has PyTorch's typed constructors for tide's dtypes", function()
        local expected = { FloatTensor = "float32", DoubleTensor = "float64",
            HalfTensor = "float16", BFloat16Tensor = "bfloat16", IntTensor = "int32",
            LongTensor = "int64", ByteTensor = "uint8", BoolTensor = "bool" }
        for name, dt in pairs(expected) do
            assert.are.equal(dt, tide[name](2).dtype, name)
            assert.are.same({ 2, 3 }, tide[name](2, 3):size(), name)
            assert.are.equal(dt, tide[name]({ 1, 0 }).dtype, name)
        end
        -- torch.LongTensor([1.5, 2.7]) -> [1, 2]
        assert.are.same({ 1, 2 }, tide.LongTensor({ 1.5, 2.7 }):totable())
        assert.are.same({ true, false }, tide.BoolTensor({ 1, 0 }):totable())
        -- torch.LongTensor(n).zero_()
        assert.are.same({ 0, 0, 0 }, tide.LongTensor(3):zero_():totable())
    end)

    it("takes a tensor of its dtype as itself (the same storage)", function()
        local f = tide.zeros(2)
        local g = tide.FloatTensor(f)
        assert.are.equal(f:data_ptr(), g:data_ptr())
        assert.are.equal("tide: FloatTensor: the tensor given is int64 on cpu, expected " ..
            "float32; convert it with :to(...), or use tide.tensor(u, {dtype = \"float32\"}) " ..
            "for a copy", msg(catch(function() return tide.FloatTensor(T({ 1 })) end)))
    end)

    it("refuses bad sizes and options", function()
        assert.are.equal("tide: Tensor: size 1 must be an integer, got 2.5",
            msg(catch(function() return tide.Tensor(2.5) end)))
        assert.are.equal("tide: LongTensor: size 2 is -1; sizes must be >= 0",
            msg(catch(function() return tide.LongTensor(2, -1) end)))
        assert.are.equal("tide: Tensor: unknown option \"bogus\"; options are device",
            msg(catch(function() return tide.Tensor(2, { bogus = 1 }) end)))
    end)
end)

describe("add / sub with PyTorch's {alpha =}", function()
    it("matches the positional alpha, for tensors and numbers", function()
        local x, u = T({ 1.0, 2.0 }), T({ 1.0, 1.0 })
        assert.are.same(x:add(u, 2):totable(), x:add(u, { alpha = 2 }):totable())
        assert.are.same({ 3, 4 }, x:add(u, { alpha = 2 }):totable())
        assert.are.same({ -2, -1 }, x:sub(1, { alpha = 3 }):totable())
        assert.are.same({ 5, 6 }, tide.add(x, 2, { alpha = 2 }):totable())
        assert.are.same({ -1, -2 }, tide.sub(x, x, { alpha = 2 }):totable())
        assert.are.same({ -1, -2 }, tide.subtract(x, x, { alpha = 2 }):totable())
        assert.are.same({ 2, 3 }, x:add(u, {}):totable()) -- no alpha: 1
    end)

    it("in place: p.data.add_(p.grad, alpha=-lr)", function()
        local p = T({ 1.0, 2.0 }, { dtype = "float32" })
        assert.are.equal(p, p:add_(T({ 1.0, 1.0 }), { alpha = -0.5 }))
        assert.are.same({ 0.5, 1.5 }, p:totable()) -- tensor([1., 2.]).add_(ones(2), alpha=-0.5)
        p:sub_(T({ 1.0, 1.0 }), { alpha = 2 })
        assert.are.same({ -1.5, -0.5 }, p:totable())
        local w = T({ 1.0 }, { requires_grad = true })
        local y = T({ 0.0 }):add(w, { alpha = 3 })
        y:sum():backward()
        assert.are.same({ 3 }, w.grad:totable())
    end)

    it("refuses an unknown option, a wrong alpha and an extra argument", function()
        local x = T({ 1.0 })
        assert.are.equal("tide: add: unknown option \"beta\"; options are other, alpha",
            msg(catch(function() return x:add(x, { alpha = 2, beta = 1 }) end)))
        assert.matches("^tide: add_: alpha %(argument #3%) must be a number, got string",
            msg(catch(function() return x:add_(x, { alpha = "a" }) end)))
        assert.are.equal("tide: sub: expected at most 3 arguments, got 4 (argument #4 is a " ..
            "number); remove it: sub takes no such argument or option",
            msg(catch(function() return x:sub(x, { alpha = 2 }, 5) end)))
        assert.are.same({ 1 }, x:totable())
    end)

    it("keeps the user's line in a tail call", function()
        local w = tide.ones(2, { requires_grad = true })
        assert.matches("porting_tensor3_spec.lua:%d+: tide: add_: in%-place operation on a leaf",
            catch(function() return w:add_(1, { alpha = 2 }) end))
    end)
end)

describe("nan_to_num positional", function()
    local inf = math.huge
    local x = T({ 0 / 0, inf, -inf, 1.0 })

    it("takes nan, posinf, neginf positionally as PyTorch", function()
        -- tensor([nan, inf, -inf]).nan_to_num(1., 2., -2.) -> [1., 2., -2.]
        assert.are.same({ 1, 2, -2, 1 }, x:nan_to_num(1.0, 2.0, -2.0):totable())
        assert.are.same(x:nan_to_num({ nan = 1, posinf = 2, neginf = -2 }):totable(),
            tide.nan_to_num(x, 1, 2, -2):totable())
        -- nan_to_num(None, 5.): nan -> 0, inf -> 5, -inf -> the lowest float32
        local r = x:nan_to_num(nil, 5.0):totable()
        assert.are.same({ 0, 5, 1 }, { r[1], r[2], r[4] })
        assert.are.equal(-3.4028234663852886e38, r[3])
        assert.are.same({ 3, 2, -2, 1 }, x:nan_to_num(T(3.0), 2, -2):totable())
        local y = x:clone()
        y:nan_to_num_(0, 9, -9)
        assert.are.same({ 0, 9, -9, 1 }, y:totable())
    end)

    it("keeps the options form and checks both", function()
        local r = x:nan_to_num({ nan = 3, posinf = 2, neginf = -2 })
        assert.are.same({ 3, 2, -2, 1 }, r:totable())
        assert.are.equal("tide: nan_to_num: nan must be a number, got string",
            msg(catch(function() return x:nan_to_num("a") end)))
        assert.are.equal("tide: nan_to_num: expected at most 2 arguments, got 3 (argument #3 " ..
            "is a number); remove it: nan_to_num takes no such argument or option",
            msg(catch(function() return x:nan_to_num({ nan = 1 }, 2) end)))
        assert.are.equal("tide: nan_to_num: expected at most 4 arguments, got 5 (argument #5 " ..
            "is a number); remove it: nan_to_num takes no such argument or option",
            msg(catch(function() return x:nan_to_num(1, 2, 3, 4) end)))
    end)
end)

describe("one-element tensors in Lua's < and <= (Python's `if loss < best:`)", function()
    it("compare their values with numbers and with each other #lua53", function()
        local loss = T(0.5)
        assert.is_true(loss < 1)
        assert.is_false(1 < loss)
        assert.is_true(loss <= 0.5)
        assert.is_true(loss > 0.25) -- Lua's a > b is b < a
        assert.is_true(T({ 3 }) < T(4))
        -- int64 values compare exactly (2^63 - 1 is no double)
        assert.is_false(T(math.maxinteger) <= math.maxinteger - 1)
        local best = { T(3.0), T(1.0), T(2.0) }
        table.sort(best)
        assert.are.same({ 1, 2, 3 }, { best[1]:item(), best[2]:item(), best[3]:item() })
    end)

    it("refuse a tensor of more elements, naming the elementwise form", function()
        local ok, e = pcall(function() return T({ 1.0, 2.0 }) < T({ 2.0, 3.0 }) end)
        assert.is_false(ok)
        assert.matches("tide: <: a tensor of 2 elements has no single truth value; compare " ..
            "elementwise with t:lt%(u%) or t:le%(u%) %(a bool tensor%)", e)
    end)
end)
