-- subscripts_spec.lua — t[key] and t[key] = v beyond t[i]: bool masks, index tensors and
-- Torch7's tables of per-dim indices (tide.subscripts), on the device under test. Values and
-- gradients from PyTorch 1.13 on the same programs (its 0-based indices plus one); every other
-- key raises instead of reading nil; failed writes leave the tensor as it was.
local tide = require("tide")
local D = require("spec.support.device")

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

local function host(t)
    return t:to("cpu"):totable()
end

local function X()
    return tide.arange(12, { device = D.name }):float():reshape(3, 4)
end

local function T(v, dt)
    return tide.tensor(v, { dtype = dt, device = D.name })
end

describe("t[mask] and t[idx] (" .. D.name .. ")", function()
    it("reads the elements or rows a bool mask selects, as PyTorch's x[mask]", function()
        local x = X()
        assert.are.same({ 6, 7, 8, 9, 10, 11 }, host(x[x:gt(5)]))
        assert.are.same({ { 0, 1, 2, 3 }, { 8, 9, 10, 11 } },
            host(x[T({ true, false, true }, "bool")]))
        assert.are.same({ 0 }, x[x:lt(-1)].shape) -- empty selections
        assert.are.same({ 0, 4 }, x[T({ false, false, false }, "bool")].shape)
    end)

    it("reads rows at 1-based indices, negative from the end, in the index's shape", function()
        local x = X()
        assert.are.same({ { 8, 9, 10, 11 }, { 0, 1, 2, 3 } }, host(x[T({ 3, 1 })]))
        assert.are.same({ { 8, 9, 10, 11 } }, host(x[T({ -1 })]))
        assert.are.same({ 2, 2, 4 }, x[T({ { 1, 2 }, { 3, 3 } })].shape)
        assert.are.same({ { 4, 5, 6, 7 } }, host(x[T({ 2 }, "int32")]))
    end)

    it("adds up the gradient of a repeated index", function()
        local x = X():requires_grad_(true)
        local w = X()
        local loss = (x[T({ 1, 1, 3 })] * w):sum()
        loss:backward()
        assert.are.same({ { 4, 6, 8, 10 }, { 0, 0, 0, 0 }, { 8, 9, 10, 11 } }, host(x.grad))
    end)

    it("writes a number or a broadcast tensor where a mask is true", function()
        local z = X()
        z[z:gt(8)] = tide.tensor({ 7, 8, 9 }, { device = D.name }):float()
        assert.are.same({ { 0, 1, 2, 3 }, { 4, 5, 6, 7 }, { 8, 7, 8, 9 } }, host(z))
        z = X()
        z[T({ true, false, true }, "bool")] = T({ 1, 2, 3, 4 }, "float32")
        assert.are.same({ { 1, 2, 3, 4 }, { 4, 5, 6, 7 }, { 1, 2, 3, 4 } }, host(z))
        z = X()
        z[z:lt(2)] = -5
        assert.are.same({ -5, -5, 2, 3 }, host(z[1]))
    end)

    it("writes rows at indices, a repeated one taking one of its values", function()
        local z = X()
        z[T({ 3, 1 })] = T({ 5, 6, 7, 8 }, "float32")
        assert.are.same({ { 5, 6, 7, 8 }, { 4, 5, 6, 7 }, { 5, 6, 7, 8 } }, host(z))
        z = X()
        z[T({ -1 })] = 0
        assert.are.same({ 0, 0, 0, 0 }, host(z[3]))
        z = X()
        z[T({ 1, 1 })] = T({ { 1, 1, 1, 1 }, { 1, 1, 1, 1 } }, "float32")
        assert.are.same({ 1, 1, 1, 1 }, host(z[1]))
    end)

    it("gives the gradient of a masked write to what was not overwritten", function()
        local x = X():requires_grad_(true)
        local y = x * 1
        y[y:gt(5)] = 0
        y:sum():backward()
        assert.are.same({ { 1, 1, 1, 1 }, { 1, 1, 0, 0 }, { 0, 0, 0, 0 } }, host(x.grad))
    end)
end)

describe("t[{...}], Torch7's per-dim index (" .. D.name .. ")", function()
    it("selects with numbers, narrows with {a, b} and {a}, keeps {} whole", function()
        local x = X()
        assert.are.same({ 5, 6 }, host(x[{ 2, { 2, 3 } }]))
        assert.are.same({ 1, 5, 9 }, host(x[{ {}, 2 }]))
        assert.are.same({ 1, 4 }, x[{ { 2 }, {} }].shape)
        assert.are.same({ { 4, 5, 6, 7 }, { 8, 9, 10, 11 } }, host(x[{ { -2, -1 } }]))
        assert.are.equal(11, x[{ -1, -1 }]:item())
        assert.are.same({}, x[{ -1, -1 }].shape)
    end)

    it("returns a view of the tensor when no index tensor takes part", function()
        local x = X()
        x[{ 2, { 2, 3 } }]:fill_(0)
        assert.are.same({ 4, 0, 0, 7 }, host(x[2]))
    end)

    it("takes one index tensor for its dim", function()
        local x = X()
        assert.are.same({ { 3, 0 }, { 7, 4 }, { 11, 8 } }, host(x[{ {}, T({ 4, 1 }) }]))
        assert.are.same({ 7, 4 }, host(x[{ 2, T({ 4, 1 }) }]))
    end)

    it("writes numbers and tensors into the indexed region", function()
        local z = X()
        z[{ 2, { 2, 3 } }] = T({ 7, 8 }, "float32")
        z[{ {}, 1 }] = -1
        assert.are.same({ { -1, 1, 2, 3 }, { -1, 7, 8, 7 }, { -1, 9, 10, 11 } }, host(z))
        z = X()
        z[{ {}, T({ 4, 1 }) }] = 0
        assert.are.same({ { 0, 1, 2, 0 }, { 0, 5, 6, 0 }, { 0, 9, 10, 0 } }, host(z))
    end)

    it("carries the gradient of a written tensor and of what it did not cover", function()
        local x = X():requires_grad_(true)
        local v = T({ 10, 20 }, "float32"):requires_grad_(true)
        local y = x * 1
        y[{ {}, T({ 4, 1 }) }] = v
        local loss = (y * 2):sum()
        loss:backward()
        assert.are.same({ { 0, 2, 2, 0 }, { 0, 2, 2, 0 }, { 0, 2, 2, 0 } }, host(x.grad))
        assert.are.same({ 6, 6 }, host(v.grad))
    end)
end)

describe("several index tensors, PyTorch's advanced indexing (" .. D.name .. ")", function()
    local function X3()
        return tide.arange(24, { device = D.name }):float():reshape(2, 3, 4)
    end
    local function flat(t)
        return t:to("cpu"):reshape(-1):totable()
    end

    it("picks elements where they broadcast together, in place or first", function()
        local x = X3()
        -- adjacent index dims: their shape stands where they were
        assert.are.same({ { 1, 11 }, { 13, 23 } }, host(x[{ {}, T({ 1, 3 }), T({ 2, 4 }) }]))
        -- apart: first
        assert.are.same({ { 1, 5, 9 }, { 14, 18, 22 } }, host(x[{ T({ 1, 2 }), {}, T({ 2, 3 }) }]))
        assert.are.same({ 2, 2, 2 }, x[{ {}, T({ { 1 }, { 3 } }), T({ 2, 4 }) }].shape)
        -- an RL update's read: one action per row
        local q = T({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, "float32")
        assert.are.same({ 2, 3, 6 }, host(q[{ tide.arange(1, 4, { device = D.name }), T({ 2, 1, 2 }) }]))
    end)

    it("writes the picked elements, a value in the result's layout", function()
        local y = X3()
        y[{ {}, T({ 1, 3 }), T({ 2, 4 }) }] = T({ { 100, 200 }, { 300, 400 } }, "float32")
        assert.are.same({ 0, 100, 2, 3, 4, 5, 6, 7, 8, 9, 10, 200, 12, 300, 14, 15, 16, 17, 18,
            19, 20, 21, 22, 400 }, flat(y))
        y = X3()
        y[{ T({ 1, 2 }), {}, T({ 2, 3 }) }] = T({ -1, -2, -3 }, "float32")
        assert.are.same({ 0, -1, 2, 3, 4, -2, 6, 7, 8, -3, 10, 11, 12, 13, -1, 15, 16, 17, -2, 19,
            20, 21, -3, 23 }, flat(y))
        y = X3()
        y[{ {}, T({ 1, 3 }), T({ 2, 4 }) }] = 0
        assert.are.same({ 0, 0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0, 12, 0, 14, 15, 16, 17, 18, 19, 20,
            21, 22, 0 }, flat(y))
    end)

    it("sends the gradient of the picked elements back to them", function()
        local q = T({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, "float32"):requires_grad_(true)
        local picked = q[{ tide.arange(1, 4, { device = D.name }), T({ 2, 1, 2 }) }]
        local loss = (picked * T({ 1, 2, 3 }, "float32")):sum()
        loss:backward()
        assert.are.same({ { 0, 1 }, { 2, 0 }, { 0, 3 } }, host(q.grad))
    end)

    it("index_put_ writes or accumulates, index_put on a copy", function()
        local z = tide.zeros({ 3, 3 }, { device = D.name })
        local same = z:index_put_({ T({ 1, 1, 3 }), T({ 2, 2, 1 }) }, T({ 1, 2, 3 }, "float32"),
            true)
        assert.are.equal(z, same)
        assert.are.same({ { 0, 3, 0 }, { 0, 0, 0 }, { 3, 0, 0 } }, host(z))
        local w = z:index_put({ T({ 2 }) }, 7)
        assert.are.same({ { 0, 3, 0 }, { 7, 7, 7 }, { 3, 0, 0 } }, host(w))
        assert.are.same({ 0, 0, 0 }, host(z[2]))
        assert.matches("tide: index_put_: indices must be a list of index tensors, one per " ..
            "leading dim, got a tensor (wrap it: {idx})",
            catch(function() return z:index_put_(T({ 1 }), 1) end), 1, true)
        assert.matches("tide: index_put_: index 4 is out of range for dim 1 of size 3",
            catch(function() return z:index_put_({ T({ 4 }) }, 1) end), 1, true)
        assert.are.same({ { 0, 3, 0 }, { 0, 0, 0 }, { 3, 0, 0 } }, host(z))
    end)
end)

describe("t[k] = v drops v's leading size-1 dims, PyTorch's setitem (" .. D.name .. ")", function()
    it("for an integer, a range, a mask and an index key, the gradient in v's shape", function()
        local a = tide.zeros({ 3, 2 }, { device = D.name })
        a[1] = tide.ones({ 1, 2 }, { device = D.name }) -- cleanrl's advantages[t] = lastgaelam
        assert.are.same({ { 1, 1 }, { 0, 0 }, { 0, 0 } }, host(a))
        local b = tide.zeros({ 4, 2, 2 }, { device = D.name })
        b[{ { 2, 3 } }] = tide.ones({ 1, 1, 2, 2 }, { device = D.name })
        assert.are.equal(8, b:sum():item())
        local m = tide.zeros({ 3, 2 }, { device = D.name })
        m[tide.tensor({ true, false, true }, { device = D.name })] = tide.ones({ 1, 2 },
            { device = D.name })
        assert.are.same({ { 1, 1 }, { 0, 0 }, { 1, 1 } }, host(m))
        local v = tide.ones({ 1, 2 }, { device = D.name, requires_grad = true })
        local d = tide.zeros({ 3, 2 }, { device = D.name })
        d[2] = v * 2
        d:sum():backward()
        assert.are.same({ { 2, 2 } }, host(v.grad))
        local e = tide.zeros({ 3, 2 }, { device = D.name })
        assert.matches("tide: setindex: cannot copy a tensor of shape [2, 2] into one of " ..
            "shape [2]", catch(function() e[1] = tide.ones({ 2, 2 }, { device = D.name }) end),
            1, true)
        assert.are.same({ { 0, 0 }, { 0, 0 }, { 0, 0 } }, host(e))
    end)
end)

describe("subscript errors (" .. D.name .. ")", function()
    local x = X()

    it("raise for a key that is not an index, where Lua would read nil", function()
        local msg = "a tensor is indexed by an integer, a bool mask, an index tensor or a " ..
            "table of per-dim indices, got "
        assert.matches("tide: index: " .. msg .. "1.5", catch(function() return x[1.5] end), 1,
            true)
        assert.matches("tide: index: " .. msg .. "boolean", catch(function() return x[true] end),
            1, true)
        assert.matches("tide: setindex: " .. msg .. "boolean",
            catch(function() x[false] = 1 end), 1, true)
        assert.matches("tide: index: a tensor index must be bool (a mask) or int64/int32 " ..
            "(1-based indices), got float32; convert it with :bool() or :long()",
            catch(function() return x[x] end), 1, true)
    end)

    it("name a mask of the wrong shape, an index out of range, too many indices", function()
        assert.matches("tide: index: the mask's shape {2} does not match the shape {3, 4} of " ..
            "the tensor's first dims", catch(function() return x[T({ true, false }, "bool")] end),
            1, true)
        assert.matches("tide: index: index 4 is out of range for dim 1 of size 3",
            catch(function() return x[T({ 4 })] end), 1, true)
        assert.matches("tide: index: index -4 is out of range for dim 1 of size 3; indices " ..
            "are 1-based: use 1..3 (or -3..-1 from the end)",
            catch(function() return x[T({ 1, -4 })] end), 1, true)
        assert.matches("tide: setindex: index 5 is out of range for dim 2 of size 4",
            catch(function() x[{ {}, T({ 5 }) }] = 0 end), 1, true)
        assert.matches("tide: index: 3 indices for a tensor of 2 dims",
            catch(function() return x[{ 1, 1, 1 }] end), 1, true)
        assert.matches("tide: index: index 5 is out of range for dim 2 of size 4",
            catch(function() return x[{ T({ 1 }), T({ 5 }) }] end), 1, true)
        assert.matches("tide: index: the mask at index 2 has size 1 in its dim 1, the dim it " ..
            "stands for has 4; a mask's shape matches the dims it covers",
            catch(function() return x[{ {}, T({ true }, "bool") }] end), 1, true)
    end)

    it("take a bool mask inside a table for the dims it stands for (PyTorch's t[mask, :])", function()
        local m = T({ true, false, true }, "bool")
        local y = tide.arange(12, { device = D.name }):reshape(3, 4)
        assert.are.same({ { 0, 1, 2, 3 }, { 8, 9, 10, 11 } }, y[{ m, {} }]:to("cpu"):totable())
        assert.are.same({ { 1, 2 }, { 5, 6 }, { 9, 10 } },
            y[{ "...", T({ false, true, true, false }, "bool") }]:to("cpu"):totable())
        -- a 2-D mask covers two dims: its true elements in row-major order, as PyTorch's
        local m2 = T({ { true, false, false, true }, { false, false, false, false },
            { false, true, false, false } }, "bool")
        assert.are.same({ 0, 3, 9 }, y[{ m2 }]:to("cpu"):totable())
        -- written too: loralib's lora_ind[enable_lora, :] = True, a number or a tensor
        local ind = tide.zeros(3, 2, { dtype = "bool", device = D.name })
        ind[{ m, {} }] = true
        assert.are.same({ { true, true }, { false, false }, { true, true } },
            ind:to("cpu"):totable())
        local z = tide.zeros(2, 3, 4, { device = D.name })
        z[{ 2, m }] = 7
        assert.are.equal(56, z:sum():item())
        assert.are.equal(0, z[1]:sum():item())
        -- gradients flow through the picked elements
        local w = tide.ones(3, 4, { dtype = "float64", device = D.name }):requires_grad_(true)
        ;(w[{ m, {} }] * 2):sum():backward()
        assert.are.same({ { 2, 2, 2, 2 }, { 0, 0, 0, 0 }, { 2, 2, 2, 2 } },
            w.grad:to("cpu"):totable())
        assert.matches("tide: setindex: the mask at index 3 has size 3 in its dim 1, the dim " ..
            "it stands for has 4", catch(function() z[{ 1, 1, m }] = 1 end), 1, true)
        assert.are.equal(56, z:sum():item())
    end)

    it("need the key on the tensor's device", function()
        local idx = tide.tensor({ 1 }, { device = D.other })
        assert.matches("tide: index: expected all tensors on the same device",
            catch(function() return x[idx] end), 1, true)
    end)

    it("leave the tensor as it was when a write fails", function()
        local z = X()
        assert.matches("tide: setindex: ", catch(function()
            z[T({ 1, 2 })] = T({ 1, 2, 3 }, "float32")
        end), 1, true)
        assert.matches("tide: setindex: ", catch(function()
            z[z:gt(5)] = T({ 1, 2 }, "float32")
        end), 1, true)
        assert.matches("tide: setindex: value must be a number or a tensor, got string",
            catch(function() z[{ 1 }] = "one" end), 1, true)
        assert.matches("tide: setindex: ", catch(function()
            z[{ 1, { 1, 2 } }] = T({ 1, 2, 3 }, "float32")
        end), 1, true)
        assert.are.same(host(X()), host(z))
    end)
end)
