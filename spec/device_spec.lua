-- device_spec.lua — device objects, the default device, tide.with_device, tide.cuda queries.
-- The runner sets TIDE_CPU_DEVICES=2: cpu:0 and cpu:1 are distinct devices.
local tide = require("tide")

describe("devices", function()
    it("runs with two virtual CPU devices", function()
        assert.are.equal("2", os.getenv("TIDE_CPU_DEVICES"))
    end)

    it("parses specs and prints names", function()
        assert.are.equal("cpu", tostring(tide.device("cpu")))
        assert.are.equal("cpu:1", tostring(tide.device("cpu:1")))
        assert.are.equal("cpu:1", tostring(tide.device("cpu", 1)))
        local d = tide.device("cpu:1")
        assert.are.equal("cpu", d.type)
        assert.are.equal(1, d.index)
        assert.are.equal(0, tide.device("cpu").index)
    end)

    it("interns device objects: == and rawequal both hold", function()
        assert.is_true(tide.device("cpu:1") == tide.device("cpu", 1))
        assert.is_true(rawequal(tide.device("cpu:1"), tide.device("cpu", 1)))
        assert.is_true(tide.device("cpu") == tide.device("cpu:0"))
        assert.is_false(tide.device("cpu") == tide.device("cpu:1"))
        assert.is_true(rawequal(tide.zeros(1).device, tide.device("cpu")))
    end)

    it("lists every usable device", function()
        local names = {}
        for i, d in ipairs(tide.devices()) do
            names[i] = tostring(d)
        end
        local expect = { "cpu", "cpu:1" }
        for i = 0, tide.cuda.device_count() - 1 do
            expect[#expect + 1] = "cuda:" .. i
        end
        assert.are.same(expect, names)
    end)

    it("rejects a device that does not exist, with the caller's line", function()
        local ok, err = pcall(tide.device, "cpu:2")
        assert.is_false(ok)
        assert.matches("tide: ", err, 1, true)
        assert.matches("cpu:2", err, 1, true)
        ok, err = pcall(function() return tide.device(true) end)
        assert.is_false(ok)
        assert.matches("device_spec.lua:%d+: tide: device: expected a device, a device name " ..
            "such as \"cpu\" or \"cuda:0\", or an integer i %(cuda:i%), got boolean", err)
        ok, err = pcall(function() return tide.zeros(2):to(-1) end)
        assert.matches("device_spec.lua:%d+: tide: to: expected a device", err)
        ok, err = pcall(function() return tide.device("cpu", -1) end)
        assert.matches("device_spec.lua:%d+: tide: device: index %-1 is invalid", err)
    end)
end)

-- PyTorch's integer device: torch.device(0), x.to(0), model.to(0) are cuda:0
describe("an integer device", function()
    it("is cuda:i, or the reason CUDA is not here", function()
        local x = tide.zeros(2)
        if tide.cuda.is_available() then
            assert.are.equal(tide.device("cuda:0"), tide.device(0))
            assert.are.equal("cuda:0", tostring(x:to(0).device))
            assert.are.equal("cuda:0", tostring(tide.nn.Linear(1, 1):to(0).weight.device))
        else
            for _, f in ipairs({ function() return tide.device(0) end,
                function() return x:to(0) end,
                function() return tide.zeros(2, { device = 1 }) end }) do
                local ok, err = pcall(f)
                assert.is_false(ok)
                assert.matches("device_spec.lua:%d+: tide: %a+: the integer device %d is " ..
                    "PyTorch's cuda:%d: CUDA is not available", err)
            end
            assert.are.equal("cpu", tostring(x.device))
        end
    end)
end)

describe("tide.cuda", function()
    it("answers without raising whether or not CUDA is here", function()
        local avail = tide.cuda.is_available()
        assert.is_boolean(avail)
        if avail then
            assert.is_nil(tide.cuda.unavailable_reason())
            assert.is_true(tide.cuda.device_count() >= 1)
            assert.are.equal("cuda", tostring(tide.best_device().type))
        else
            local reason = tide.cuda.unavailable_reason()
            assert.is_string(reason)
            -- one cause, stated once (not the runtime's "driver version is insufficient" after it)
            assert.is_nil(reason:find("no CUDA driver found.*: "))
            assert.is_nil(reason:find("no CUDA device found: ", 1, true))
            assert.are.equal(0, tide.cuda.device_count())
            assert.are.equal(tide.device("cpu"), tide.best_device())
        end
    end)

    it("raises the core's clear error for cuda when it is unavailable", function()
        if tide.cuda.is_available() then
            return
        end
        local ok, err = pcall(function() return tide.device("cuda") end)
        assert.is_false(ok)
        assert.matches("device_spec.lua:%d+: tide: device: CUDA is not available", err)
        ok, err = pcall(function() return tide.zeros(2, { device = "cuda" }) end)
        assert.is_false(ok)
        assert.matches("device_spec.lua:%d+: tide: ", err)
        ok, err = pcall(function() return tide.ones(2):cuda() end)
        assert.is_false(ok)
        assert.matches("device_spec.lua:%d+: tide: .*CUDA is not available", err)
        ok = pcall(tide.cuda.memory_allocated)
        assert.is_false(ok)
    end)
end)

describe("memory stats", function()
    it("reports bytes allocated on a CPU device", function()
        local s0 = tide.memory_stats("cpu:1")
        local t = tide.zeros(1000, { device = "cpu:1" })
        local s1 = tide.memory_stats("cpu:1")
        assert.is_true(s1.allocated >= s0.allocated + 4000)
        assert.is_true(s1.peak >= s1.allocated)
        t:free()
        assert.is_true(tide.memory_stats("cpu:1").allocated <= s1.allocated - 4000)
    end)

    it("enforces the per-state memory limit and restores it", function()
        assert.are.equal(0, tide.memory_limit())
        collectgarbage()
        tide.set_memory_limit(tide.memory_in_use() + 1024)
        local ok, err = pcall(function() return tide.zeros(1024 * 1024) end)
        tide.set_memory_limit(0)
        assert.is_false(ok)
        assert.matches("device_spec.lua:%d+: tide: zeros: memory limit of %d+ bytes reached", err)
        assert.are.equal(0, tide.memory_limit())
        assert.are.equal(4096, tide.zeros(1024):numel() * 4)
    end)
end)

describe("default device", function()
    after_each(function()
        tide.set_default_device("cpu")
    end)

    it("starts as cpu and steers creation calls", function()
        assert.are.equal(tide.device("cpu"), tide.get_default_device())
        tide.set_default_device("cpu:1")
        assert.are.equal("cpu:1", tostring(tide.get_default_device()))
        assert.are.equal("cpu:1", tostring(tide.zeros(2).device))
        assert.are.equal("cpu:1", tostring(tide.tensor({ 1, 2 }).device))
        assert.are.equal("cpu:1", tostring(tide.arange(3).device))
        assert.are.equal("cpu:1", tostring(tide.eye(2).device))
        assert.are.equal("cpu", tostring(tide.zeros(2, { device = "cpu" }).device))
    end)

    it("never moves an existing tensor: ops follow their inputs", function()
        local a = tide.ones(2)
        tide.set_default_device("cpu:1")
        assert.are.equal("cpu", tostring((a + 1).device))
        assert.are.equal("cpu", tostring(a:sum().device))
    end)

    it("with_device sets it for fn, returns fn's results and restores it", function()
        local a, b = tide.with_device("cpu:1", function(x)
            return tide.zeros(x).device, 7
        end, 3)
        assert.are.equal("cpu:1", tostring(a))
        assert.are.equal(7, b)
        assert.are.equal("cpu", tostring(tide.get_default_device()))
    end)

    it("with_device restores the default when fn raises", function()
        local ok, err = pcall(tide.with_device, "cpu:1", function()
            error("boom")
        end)
        assert.is_false(ok)
        assert.matches("boom", err)
        assert.are.equal("cpu", tostring(tide.get_default_device()))
    end)

    it("with_device reports a bad device at the caller's line", function()
        local ok, err = pcall(function() tide.with_device("cpu:9", function() end) end)
        assert.is_false(ok)
        assert.matches("device_spec.lua:%d+: tide: ", err)
        assert.are.equal("cpu", tostring(tide.get_default_device()))
    end)
end)

describe("tide.accelerator (PyTorch 2.6's torch.accelerator)", function()
    it("is tide's CUDA under device-neutral names", function()
        local acc = tide.accelerator
        assert.are.equal(tide.cuda.is_available(), acc.is_available())
        assert.are.equal(tide.cuda.device_count(), acc.device_count())
        -- the current tutorials' first line
        local device = acc.is_available() and acc.current_accelerator().type or "cpu"
        if acc.is_available() then
            assert.are.equal("cuda", device)
            assert.are.equal(tide.device("cuda:0"), acc.current_accelerator(true))
        else
            assert.are.equal("cpu", device)
            assert.is_nil(acc.current_accelerator())
            local ok, err = pcall(acc.synchronize)
            assert.is_false(ok)
            assert.matches("tide: accelerator.synchronize: no accelerator is available here",
                err, 1, true)
        end
        local ok, err = pcall(acc.current_accelerator, "yes")
        assert.is_false(ok)
        assert.matches("check_available must be true or false, got string", err, 1, true)
    end)
end)
