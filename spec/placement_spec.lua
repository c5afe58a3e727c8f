-- placement_spec.lua — the device placement rules of API.md (1-4 and 6), run once against the
-- virtual device cpu:1 (TIDE_CPU_DEVICES=2, set by the runner) and once against cuda:0 (tagged
-- #cuda: `busted --run=gpu`; pending where no GPU is present). The host is always cpu.
local tide = require("tide")

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return err
end

describe("placement", function()
    it("runs with two virtual CPU devices", function()
        assert.are.equal("2", os.getenv("TIDE_CPU_DEVICES"))
    end)
end)

local function rules(D1)

    describe("rule 1: same device", function()
        local a, b
        before_each(function()
            a = tide.tensor({ 1, 2, 3 }, { dtype = "float32" })
            b = tide.tensor({ 10, 20, 30 }, { dtype = "float32", device = D1 })
        end)

        it("raises with both device names, the fix and the caller's line", function()
            local err = catch(function() return a + b end)
            assert.are.equal("placement_spec.lua:" .. debug.getinfo(1, "l").currentline - 1
                .. ": tide: add: expected all tensors on the same device, found cpu and " .. D1
                .. '; move one with :to("' .. D1 .. '")', err:match("[^/]*$"))
        end)

        it("names the op for metamethods in either order and for methods", function()
            assert.matches("placement_spec.lua:%d+: tide: mul: .*same device.*" .. D1 .. " and cpu",
                catch(function() return b * a end))
            assert.matches("tide: sub: .*same device", catch(function() return a - b end))
            assert.matches("tide: matmul: .*same device.*cpu and " .. D1,
                catch(function() return a:matmul(b) end))
            assert.matches("tide: cat: .*same device", catch(function() return tide.cat({ a, b }) end))
            -- the comparisons that answer a boolean name themselves, not the eq or ne inside
            -- and the ops written over others (where, mul, pow, maximum, stack, sub, matmul)
            for _, op in ipairs({ "equal", "allclose", "isclose", "xlogy", "ldexp", "float_power",
                "logaddexp", "logaddexp2", "tensordot", "cdist", "complex", "polar",
                "cholesky_solve", "slice_scatter", "bernoulli_" }) do
                local f = a[op] or tide[op]
                local x, y = a, b
                if op == "cdist" or op == "tensordot" then
                    x, y = a:view(1, 3), b:view(1, 3)
                elseif op == "cholesky_solve" then
                    x, y = a:view(3, 1), tide.eye(3, { device = D1 })
                elseif op == "bernoulli_" then
                    y = tide.full({ 3 }, 0.5, { device = D1 })
                end
                assert.matches("tide: " .. op .. ": expected all tensors on the same device, " ..
                    "found cpu and " .. D1, catch(function() return f(x, y, op == "tensordot" and
                        1 or nil) end), 1, true)
            end
            assert.matches("tide: where: .*same device",
                catch(function() return tide.where(a:gt(1), a, b) end))
            assert.matches("tide: index_add_: .*same device",
                catch(function() return a:index_add_(1, { 1, 2, 3 }, b) end))
        end)

        it("lets numbers combine with a tensor on any device", function()
            assert.are.same({ 11, 21, 31 }, (b + 1):cpu():totable())
            assert.are.same({ 9, 19, 29 }, (b - 1):cpu():totable())
            assert.are.same({ -9, -19, -29 }, (1 - b):cpu():totable())
            assert.are.same({ 20, 40, 60 }, (2 * b):cpu():totable())
        end)

        it("leaves both operands unchanged after a failed call", function()
            catch(function() return a:add_(b) end)
            assert.are.same({ 1, 2, 3 }, a:totable())
            assert.are.same({ 10, 20, 30 }, b:cpu():totable())
        end)
    end)

    describe("rule 2: results stay put", function()
        it("keeps every result on the inputs' device", function()
            local x = tide.ones(2, 3, { device = D1 })
            local y = tide.ones(3, 2, { device = D1 })
            for _, r in ipairs({ x + x, x * 2, -x, x:exp(), x:sum(), x:sum(1), x:matmul(y), x:t(),
                x:view(6), x:softmax(2), x:clone(), x[1], x:eq(1), x:float(), tide.cat({ x, x }),
                tide.stack({ x, x }), x:index_select(2, { 1 }) }) do
                assert.are.equal(D1, tostring(r.device))
            end
            local m, i = x:max(2)
            assert.are.equal(D1, tostring(m.device))
            assert.are.equal(D1, tostring(i.device))
        end)

        it("creates directly on the asked device, without a transfer", function()
            tide.reset_transfer_stats()
            local z = tide.zeros(4, { device = D1 })
            local r = tide.rand(4, { device = D1 })
            local e = tide.eye(3, { device = D1 })
            local s = tide.arange(5, { device = D1 })
            assert.are.equal(D1, tostring(z.device))
            assert.are.equal(D1, tostring(r.device))
            assert.are.equal(D1, tostring(e.device))
            assert.are.equal(D1, tostring(s.device))
            local st = tide.transfer_stats()
            assert.are.equal(0, st.h2d_count + st.d2h_count + st.d2d_count)
        end)
    end)

    describe("rule 3: explicit transfer", function()
        it("returns the same object when already there", function()
            local t = tide.ones(3, { device = D1 })
            tide.reset_transfer_stats()
            assert.is_true(rawequal(t, t:to(D1)))
            assert.is_true(rawequal(t, t:to(tide.device(D1))))
            assert.is_true(rawequal(t, t:to("float32")))
            assert.is_true(rawequal(t, t:to(D1, { dtype = "float32" })))
            local c = tide.ones(2)
            assert.is_true(rawequal(c, c:cpu()))
            assert.are.equal(0, tide.transfer_stats().d2h_count + tide.transfer_stats().h2d_count)
        end)

        it("copy = true always gives a fresh copy", function()
            local t = tide.tensor({ 1, 2 }, { device = D1 })
            local u = t:to(D1, { copy = true })
            assert.is_false(rawequal(t, u))
            u:fill_(9)
            assert.are.same({ 1, 2 }, t:cpu():totable())
        end)

        it("makes a new tensor on the target and leaves the source alone", function()
            local t = tide.tensor({ 1.5, 2.5 })
            local u = t:to(D1)
            assert.are.equal(D1, tostring(u.device))
            assert.are.equal("cpu", tostring(t.device))
            assert.are.same({ 1.5, 2.5 }, u:cpu():totable())
            local v = t:to(D1, { dtype = "float64" })
            assert.are.equal("float64", v.dtype)
            local w = t:to("int64")
            assert.are.same({ 1, 2 }, w:totable())
            assert.are.equal("float32", t.dtype)
            assert.are.equal("cpu", tostring(t:to({ device = "cpu" }).device))
        end)

        it("copy_ copies values in place across devices", function()
            local dst = tide.zeros(3)
            local src = tide.tensor({ 1, 2, 3 }, { device = D1 })
            assert.is_true(rawequal(dst, dst:copy_(src)))
            assert.are.same({ 1, 2, 3 }, dst:totable())
            assert.are.same({ 1, 2, 3 }, src:cpu():totable())
        end)

        it("reports an unknown device or dtype", function()
            assert.matches("placement_spec.lua:%d+: tide: ", catch(function()
                return tide.ones(1):to("cpu:7")
            end))
            assert.matches("tide: to: expected a device", catch(function()
                return tide.ones(1):to(1.5)
            end))
            -- an integer is PyTorch's cuda:i
            if not tide.cuda.is_available() then
                assert.matches("tide: to: the integer device 12 is PyTorch's cuda:12: CUDA is " ..
                    "not available", catch(function()
                    return tide.ones(1):to(12)
                end), 1, true)
            end
        end)

        it("a name that is neither a device nor a dtype says so and lists both", function()
            local t = tide.ones(1)
            local err = catch(function() return t:to("float128") end)
            assert.matches('^spec/placement_spec%.lua:%d+: tide: to: "float128" is neither a ' ..
                'device nor a dtype; devices are "cpu", "cpu:N", "cuda" or "cuda:N", dtypes ' ..
                '"float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8" or "bool"$', err)
            err = catch(function() return t:to({ dtype = "float128" }) end)
            assert.matches('tide: to: unknown dtype float128; use "float32", "float64"', err, 1, true)
            err = catch(function() return tide.nn.Linear(2, 2):to("float128") end)
            assert.matches('^spec/placement_spec%.lua:%d+: tide: Module:to: "float128" is neither a ' ..
                'device nor a dtype; devices are "cpu", "cpu:N", "cuda" or "cuda:N", dtypes ' ..
                '"float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8" or "bool"$', err)
        end)
    end)

    describe("rule 4: host views need the host", function()
        it("totable refuses a tensor off the host", function()
            local t = tide.ones(2, { device = D1 })
            local err = catch(function() return t:totable() end)
            assert.matches("placement_spec.lua:%d+: tide: totable: tensor is on " .. D1 .. "; call "
                .. ":cpu%(%) first to copy it to the host", err)
            assert.are.same({ 1, 1 }, t:cpu():totable())
        end)

        it("item works on any device", function()
            assert.are.equal(6.0, tide.tensor({ 1.0, 2.0, 3.0 }, { device = D1 }):sum():item())
            assert.are.equal(3, tide.tensor({ 1, 2 }, { device = D1 }):sum():item())
        end)

        it("tostring copies from the device and names it", function()
            local s = tostring(tide.tensor({ 1, 2 }, { device = D1 }))
            assert.are.equal("[1, 2]\n[tide.Tensor of shape [2], int64, " .. D1 .. "]", s)
        end)
    end)

    describe("rule 6: transfers are visible", function()
        before_each(function()
            tide.reset_transfer_stats()
        end)
        after_each(function()
            tide.transfer_guard("allow")
        end)

        it("counts bytes and copies per direction", function()
            local h = tide.ones(10)            -- 40 bytes of float32 on the host
            local d = h:to(D1)                 -- host -> device
            local back = d:cpu()               -- device -> host
            local st = tide.transfer_stats()
            assert.are.equal(40, st.h2d_bytes)
            assert.are.equal(1, st.h2d_count)
            assert.are.equal(40, st.d2h_bytes)
            assert.are.equal(1, st.d2h_count)
            assert.are.equal(0, st.d2d_bytes)
            assert.are.same({ bytes = 40, count = 1 }, st.h2d)
            assert.are.same({ bytes = 40, count = 1 }, st.d2h)
            assert.are.same({ bytes = 0, count = 0 }, st.d2d)
            assert.are.equal(10, back:numel())
        end)

        it("counts a device-side dtype change as no transfer", function()
            local d = tide.ones(4, { device = D1 })
            d:double()
            d:to(D1, { copy = true })
            local st = tide.transfer_stats()
            assert.are.equal(0, st.h2d_count + st.d2h_count + st.d2d_count)
        end)

        it("resets to zero", function()
            tide.ones(4):to(D1)
            tide.reset_transfer_stats()
            local st = tide.transfer_stats()
            assert.are.equal(0, st.h2d_bytes)
            assert.are.equal(0, st.h2d_count)
        end)

        it("counts implicit copies from printing and item()", function()
            local d = tide.ones(3, { device = D1 })
            local _ = tostring(d)
            assert.are.equal(12, tide.transfer_stats().d2h_bytes)
            local _ = d:sum():item()
            assert.are.equal(16, tide.transfer_stats().d2h_bytes)
            assert.are.equal(2, tide.transfer_stats().d2h_count)
        end)

        it("transfer_guard returns the previous mode", function()
            assert.are.equal("allow", tide.transfer_guard("log"))
            assert.are.equal("log", tide.transfer_guard("disallow"))
            assert.are.equal("disallow", tide.transfer_guard("allow"))
            assert.are.equal("allow", tide.transfer_guard())
            assert.matches("tide: transfer_guard: unknown mode", catch(function()
                tide.transfer_guard("never")
            end))
        end)

        it("disallow refuses implicit copies but never explicit ones", function()
            local d = tide.tensor({ 2.0, 3.0 }, { device = D1 })
            tide.transfer_guard("disallow")
            assert.matches("placement_spec.lua:%d+: tide: .*implicit transfer.*" .. D1,
                catch(function() return d:sum():item() end))
            assert.matches("placement_spec.lua:%d+: tide: .*implicit transfer",
                catch(function() return tostring(d) end))
            assert.are.same({ 2.0, 3.0 }, d:cpu():totable())
            local h = tide.zeros(2)
            h:copy_(d)
            assert.are.same({ 2.0, 3.0 }, h:totable())
            assert.are.equal(D1, tostring(h:to(D1).device))
            assert.are.equal(5, tide.ones(5):sum():item()) -- host tensors need no copy
        end)

        it("log lets implicit copies through #lua53", function()
            local d = tide.tensor({ 2.0, 3.0 }, { device = D1 })
            tide.transfer_guard("log")
            assert.are.equal(5.0, d:sum():item())
            assert.are.equal(4 + 0, tide.transfer_stats().d2h_bytes)
        end)
    end)
end

describe("placement on cpu:1", function()
    rules("cpu:1")
end)

describe("placement on cuda:0 #cuda", function()
    if tide.cuda.is_available() then
        rules("cuda:0")
    else
        it("needs a CUDA device", function()
            pending("no CUDA device: " .. tostring(tide.cuda.unavailable_reason()))
        end)
    end
end)
