-- numerics_spec.lua — results that used to be silently wrong (issue 10, items 1-4): the scale of
-- add_/sub_, the range of the random generator, fmod against remainder, integer division.
-- Runs on the device under test (spec/support/device.lua): cpu, cpu:1 and the (emulated) GPU.
local tide = require("tide")
local D = require("spec.support.device")

if D.kind == "cuda" and not tide.cuda.is_available() then
    describe("numerics on " .. D.name, function()
        it("needs a CUDA device", function()
            pending("no CUDA device")
        end)
    end)
    return
end

local function T(x, dt)
    return tide.tensor(x, { dtype = dt or "float32", device = D.name })
end

local function vals(t)
    return t:cpu():totable()
end

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

describe("the scale of add/sub and their in-place twins on " .. D.name, function()
    it("add_ and sub_ apply alpha as add and sub do", function()
        local t = T({ 1, 2, 4 })
        assert.are.same({ 0.5, 1, 2 }, vals(t:clone():add_(t, -0.5)))
        assert.are.same({ 0.5, 1, 2 }, vals(t:add(t, -0.5)))
        assert.are.same({ -1, -2, -4 }, vals(t:clone():sub_(t, 2)))
        assert.are.same({ 5, 6, 8 }, vals(t:clone():add_(2, 2)))
        assert.are.same({ -3, -2, 0 }, vals(t:clone():sub_(2, 2)))
        -- the same object comes back, changed in place
        local u = t:clone()
        assert.is_true(rawequal(u, u:add_(t, 3)))
        assert.are.same({ 4, 8, 16 }, vals(u))
        -- a hand-written SGD step converges instead of diverging
        local w = T({ 1, -2, 3 })
        for _ = 1, 50 do
            w:add_(w, -0.1) -- the gradient of w^2 / 2 is w
        end
        for _, v in ipairs(vals(w)) do
            assert.is_true(math.abs(v) < 0.02, "w = " .. v)
        end
    end)

    it("integer alpha stays exact; a float alpha into an integer tensor is refused", function()
        local i = T({ 1, 2, 3 }, "int64")
        assert.are.same({ 7, 13, 19 }, vals(i:clone():add_(i, 5) + 1))
        local err = catch(function() return i:clone():add_(i, 0.5) end)
        assert.matches("numerics_spec.lua:%d+: tide: add_: ", err)
        assert.are.same({ 1, 2, 3 }, vals(i))
    end)

    it("a number then a tensor is PyTorch's deprecated add_(alpha, other), with its warning",
        function()
        -- PyTorch 1.13: torch.tensor([1., 2.]).add(2, torch.tensor([3., 4.])) is [7, 10], with
        -- "This overload of add is deprecated" once (Torch7's x:add(value, y) means the same)
        local warn = require("tide._warn")
        local want = { add = { 7, 10 }, sub = { -5, -6 }, add_ = { 7, 10 }, sub_ = { -5, -6 } }
        for _, m in ipairs({ "add", "sub", "add_", "sub_" }) do
            local t, x = T({ 1, 2 }), T({ 3, 4 })
            local lines, real = {}, io.stderr
            io.stderr = { write = function(_, s) lines[#lines + 1] = s end } -- luacheck: ignore
            warn.reset("legacy_alpha." .. m)
            local ok, r = pcall(function() local r = t[m](t, 2, x) return r end)
            io.stderr = real -- luacheck: ignore
            assert(ok, r)
            assert.are.same(want[m], vals(r))
            assert.are.same(m:sub(-1) == "_" and want[m] or { 1, 2 }, vals(t))
            assert.matches("numerics_spec.lua:%d+: tide: warning: This overload of " .. m ..
                " is deprecated: " .. m .. "%(Number alpha, Tensor other%)", table.concat(lines))
        end
    end)

    it("a scale that is not a number raises, naming the method, and changes nothing", function()
        local t, x = T({ 1, 2 }), T({ 3, 4 })
        for _, m in ipairs({ "add", "sub", "add_", "sub_" }) do
            local err = catch(function() return t[m](t, x, "2") end)
            assert.matches("tide: " .. m .. ": alpha %(argument #3%) must be a number, got string",
                err)
        end
        assert.are.same({ 1, 2 }, vals(t))
    end)

    it("ops without a scale refuse a third argument instead of ignoring it", function()
        local t, x = T({ 1, 2 }), T({ 3, 4 })
        for _, m in ipairs({ "mul", "div", "pow", "maximum", "mul_", "div_", "remainder", "fmod",
            "floor_divide" }) do
            local err = catch(function() return t[m](t, x, 2) end)
            assert.matches("numerics_spec.lua:%d+: tide: " .. m .. ": takes one other operand, got " ..
                "an extra argument #3 %(number%); only add and sub take a scale %(alpha%)", err)
        end
        assert.are.same({ 1, 2 }, vals(t))
    end)

    it("clamp, uniform_, normal_ and fill_ refuse a tensor where a number goes", function()
        local t, x = T({ 1, 2 }), T({ 0 })
        assert.matches("tide: clamp: min must be a number, got a tensor",
            catch(function() return t:clamp(x, 2) end))
        assert.matches("tide: clamp_: max must be a number, got a tensor",
            catch(function() return t:clamp_(0, x) end))
        assert.matches("tide: uniform_: to must be a number, got a tensor",
            catch(function() return t:uniform_(0, x) end))
        assert.matches("tide: normal_: std must be a number, got a tensor",
            catch(function() return t:normal_(0, x) end))
        assert.matches("tide: fill_: value must be a number, got a tensor",
            catch(function() return t:fill_(x) end))
        assert.are.same({ 1, 2 }, vals(t))
    end)
end)

describe("the random generator on " .. D.name, function()
    it("rand is in the open interval (0, 1) and randn has no outliers, for seeds 0-9", function()
        -- the emulated GPU runs kernels a thread at a time on the CPU: a fifth of the draws there
        -- (the same numbers as the CPU's, which cuda_spec checks)
        local emu = D.kind == "cuda" and (os.getenv("TIDE_CUDA_LIB") or ""):match("cuda%-emu")
        local n = emu and 200000 or 1000000
        for seed = 0, 9 do
            tide.manual_seed(seed)
            local x = tide.randn(n, { dtype = "float64", device = D.name })
            local m = x:mean():item()
            local var = (x - m):pow(2):sum():item() / (n - 1)
            local big = x:abs():max():item()
            -- 5 standard errors: the mean's is 1/sqrt(n), the variance's sqrt(2/n)
            assert.is_true(math.abs(m) < 5 / math.sqrt(n), ("seed %d: mean %g"):format(seed, m))
            assert.is_true(math.abs(var - 1) < 5 * math.sqrt(2 / n),
                ("seed %d: variance %g"):format(seed, var))
            assert.is_true(big <= 6.5, ("seed %d: |x| = %g"):format(seed, big))
            for _, dt in ipairs({ "float32", "float64" }) do
                tide.manual_seed(seed)
                local u = tide.rand(n, { dtype = dt, device = D.name })
                local lo, hi = u:min():item(), u:max():item()
                assert.is_true(lo > 0 and hi < 1, ("seed %d %s: rand in [%.17g, %.17g]"):format(
                    seed, dt, lo, hi))
                assert.is_true(math.abs(u:mean():item() - 0.5) < 5 * math.sqrt(1 / 12 / n))
            end
        end
    end)

    it("the first draws after manual_seed(0) are ordinary numbers", function()
        tide.manual_seed(0)
        local u = tide.rand(1, { dtype = "float64", device = D.name }):item()
        assert.is_true(u > 1e-6 and u < 1 - 1e-6, "rand " .. u)
        tide.manual_seed(0)
        local z = tide.randn(4, { dtype = "float64", device = D.name })
        assert.is_true(z:abs():max():item() < 4, "randn " .. tostring(z))
        -- an Embedding made after seed 0 holds no -37
        tide.manual_seed(0)
        local e = tide.nn.Embedding(10, 4):to(D.name)
        assert.is_true(e.weight:abs():max():item() < 5)
    end)

    it("uniform_ stays below its upper bound in float64 too", function()
        tide.manual_seed(3)
        local x = tide.empty(200000, { dtype = "float64", device = D.name }):uniform_(1, 1 + 1e-15)
        assert.is_true(x:max():item() < 1 + 1e-15)
        assert.is_true(x:min():item() >= 1)
    end)
end)

describe("remainder and fmod on " .. D.name, function()
    it("remainder is floor modulo (Lua's %), fmod is truncated (C's fmod), for floats", function()
        for _, dt in ipairs({ "float32", "float64" }) do
            local a, b = T({ -7, 7, -7, 7, 7.5, -0.5 }, dt), T({ 3, 3, -3, -3, 2, 2 }, dt)
            assert.are.same({ 2, 1, -1, -2, 1.5, 1.5 }, vals(a:remainder(b)))
            assert.are.same({ 2, 1, -1, -2, 1.5, 1.5 }, vals(a % b))
            assert.are.same({ -1, 1, -1, 1, 1.5, -0.5 }, vals(a:fmod(b)))
            assert.are.same({ -1 }, vals(T({ -7 }, dt):fmod(3)))
            assert.are.same({ 2 }, vals(T({ -7 }, dt):remainder(3)))
            assert.are.same({ 2 }, vals(T({ -7 }, dt) % 3))
            -- scalar first: 7 % x and tide.fmod(7, x)
            assert.are.same({ -2, 1 }, vals(7 % T({ -3, 3 }, dt)))
            assert.are.same({ 1, 1 }, vals(tide.fmod(7, T({ -3, 3 }, dt))))
            assert.are.same({ -1, -1 }, vals(tide.fmod(-7, T({ -3, 3 }, dt))))
            assert.are.same({ -2, 1 }, vals(tide.remainder(7, T({ -3, 3 }, dt))))
            -- every value agrees with Lua's % and math.fmod
            local xs, ys = { -7.25, 7.25, -1, 1, 0.5, -9 }, { 2, -2, 4, -4, -0.75, 0.5 }
            local r, f = vals(T(xs, dt):remainder(T(ys, dt))), vals(T(xs, dt):fmod(T(ys, dt)))
            for i = 1, #xs do
                assert.are.equal(xs[i] % ys[i], r[i])
                assert.are.equal(math.fmod(xs[i], ys[i]), f[i])
            end
        end
    end)

    it("the same for integers, with the in-place twins", function()
        for _, dt in ipairs({ "int32", "int64" }) do
            local a, b = T({ -7, 7, -7, 7, 6 }, dt), T({ 3, 3, -3, -3, 3 }, dt)
            assert.are.same({ 2, 1, -1, -2, 0 }, vals(a % b))
            assert.are.same({ -1, 1, -1, 1, 0 }, vals(a:fmod(b)))
            assert.are.same({ -1, 1, -1, 1, 0 }, vals(a:clone():fmod_(b)))
            assert.are.same({ 2, 1, -1, -2, 0 }, vals(a:clone():remainder_(b)))
            assert.are.same(dt, a:fmod(b).dtype)
            assert.are.same({ -1, 1, -1, 1, 0 }, vals(a:fmod(3)))
            assert.are.same({ 2, 1, 2, 1, 0 }, vals(a:remainder(3)))
        end
        local u = T({ 7, 200 }, "uint8")
        assert.are.same({ 1, 2 }, vals(u:fmod(3)))
        assert.are.same({ 1, 2 }, vals(u % 3))
    end)
end)

describe("integer division on " .. D.name, function()
    local INT64_MIN = math.mininteger
    local INT32_MIN = -2147483648

    it("MIN // -1 wraps to MIN as two's complement, MIN % -1 is 0 (no SIGFPE)", function()
        local a = T({ INT64_MIN, INT64_MIN + 1, 7 }, "int64")
        local m1 = T({ -1, -1, -1 }, "int64")
        assert.are.same({ INT64_MIN, math.maxinteger, -7 }, vals(a // m1))
        assert.are.same({ INT64_MIN, math.maxinteger, -7 }, vals(a // -1))
        assert.are.same({ 0, 0, 0 }, vals(a % m1))
        assert.are.same({ 0, 0, 0 }, vals(a % -1))
        assert.are.same({ 0, 0, 0 }, vals(a:fmod(m1)))
        assert.are.same({ 0, 0, 0 }, vals(a:fmod(-1)))
        assert.are.same({ INT64_MIN, math.maxinteger, -7 }, vals(a:clone():floor_divide_(m1)))
        local b = T({ INT32_MIN, 5 }, "int32")
        assert.are.same({ INT32_MIN, -5 }, vals(b // T({ -1, -1 }, "int32")))
        assert.are.same({ 0, 0 }, vals(b % T({ -1, -1 }, "int32")))
        assert.are.same({ 0, 0 }, vals(b:fmod(T({ -1, -1 }, "int32"))))
        -- the rest of floor division, as Lua's //
        local x, y = T({ -7, 7, -7, 7, 0 }, "int64"), T({ 2, -2, -2, 2, -3 }, "int64")
        assert.are.same({ -7 // 2, 7 // -2, -7 // -2, 7 // 2, 0 // -3 }, vals(x // y))
    end)

    it("a zero divisor given as a number raises on every device, and changes nothing", function()
        for _, dt in ipairs({ "int32", "int64", "uint8" }) do
            local a = T({ 5, 6 }, dt)
            for _, c in ipairs({
                { "floor_divide", function() return a // 0 end },
                { "remainder", function() return a % 0 end },
                { "fmod", function() return a:fmod(0) end },
                { "floor_divide_", function() return a:floor_divide_(0) end },
                { "remainder_", function() return a:remainder_(0) end },
                { "fmod_", function() return a:fmod_(0) end },
            }) do
                local err = catch(c[2])
                assert.matches("numerics_spec.lua:%d+: tide: " .. c[1] .. ": integer division by zero",
                    err)
            end
            assert.are.same({ 5, 6 }, vals(a))
        end
        -- floats divide by zero as IEEE says
        local f = vals(T({ 1, -1 }) // 0)
        assert.are.equal(math.huge, f[1])
        assert.are.equal(-math.huge, f[2])
        local r = vals(T({ 1 }) % 0)
        assert.is_true(r[1] ~= r[1])
    end)

    if D.kind == "cpu" then
        it("a zero in a divisor tensor raises on the CPU (no synchronisation needed there)",
            function()
                local a, z = T({ 5, 6, 7 }, "int64"), T({ 1, 0, 2 }, "int64")
                assert.matches("numerics_spec.lua:%d+: tide: floor_divide: integer division by zero",
                    catch(function() return a // z end))
                assert.matches("tide: remainder: integer division by zero",
                    catch(function() return a % z end))
                assert.matches("tide: fmod: integer division by zero",
                    catch(function() return a:fmod(z) end))
                assert.matches("tide: floor_divide_: integer division by zero",
                    catch(function() return a:floor_divide_(z) end))
                assert.matches("tide: floor_divide: integer division by zero",
                    catch(function() return 10 // z end))
                assert.matches("tide: remainder: integer division by zero",
                    catch(function() return T({ 3 }, "int32") % T({ 0, 1 }, "int32") end))
                assert.matches("tide: floor_divide: not implemented for two bool tensors",
                    catch(function() return T({ true }, "bool"):floor_divide(T({ false }, "bool")) end))
                assert.are.same({ 5, 6, 7 }, vals(a))
                -- a zero dividend is fine
                assert.are.same({ 0, 0 }, vals(0 // T({ 3, -3 }, "int64")))
            end)
    else
        it("a zero in a divisor tensor gives 0 on CUDA (checking would need a synchronisation)",
            function()
                local a, z = T({ 5, -6, 7 }, "int64"), T({ 1, 0, 2 }, "int64")
                assert.are.same({ 5, 0, 3 }, vals(a // z))
                assert.are.same({ 0, 0, 1 }, vals(a % z))
                assert.are.same({ 0, 0, 1 }, vals(a:fmod(z)))
                assert.are.same({ 10, 0 }, vals(10 // T({ 1, 0 }, "int32")))
            end)
    end

    -- PyTorch 1.13: torch.tensor([2, 3, -2]) ** 2 is int64 [4, 9, 4]; an integer to a negative
    -- integer NUMBER power raises ("Integers to negative integer powers are not allowed.")
    it("integer pow stays integer and refuses a negative integer exponent", function()
        local a = T({ 2, 3, -2 }, "int64")
        assert.are.same({ 4, 9, 4 }, vals(a ^ 2))
        assert.are.equal("int64", (a ^ 2).dtype)
        assert.are.same({ 4, 27, -8 }, vals(a ^ T({ 2, 3, 3 }, "int64")))
        assert.are.same({ 4, 8, 8 }, vals(2 ^ T({ 2, 3, 3 }, "int64")))
        assert.are.equal("int32", (T({ 2 }, "int32") ^ 3).dtype)
        assert.are.equal("float32", (a ^ 0.5).dtype)
        assert.matches("numerics_spec.lua:%d+: tide: pow: integers to negative integer powers " ..
            "are not allowed %(as PyTorch's%): int64 tensor %^ %-1", catch(function()
                return a ^ -1
            end))
        -- an exponent TENSOR holding a negative computes, as PyTorch's (0, or 1 and +-1 for
        -- bases 1 and -1: torch.tensor([3, 1, -1, 2]) ** torch.tensor([-2, -2, -3, 2]))
        assert.are.same({ 2, 0, 4 }, vals(a ^ T({ 1, -1, 2 }, "int64")))
        assert.are.same({ 1, -1, 1 }, vals(T({ 1, -1, 1 }, "int64") ^ T({ -3, -3, -2 }, "int64")))
        assert.are.same({ 0, 1, -1, 4 }, vals(T({ 3, 1, -1, 2 }, "int64") ^
            T({ -2, -2, -3, 2 }, "int64")))
    end)
end)
