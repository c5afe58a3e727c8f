-- The inputs that made the sanitizers report undefined behaviour (issue 10, items 12 and 15), as a
-- script meets them. The C side of each is in spec/c/test_sanitizer_inputs.c.
local tide = require("tide")

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

describe("empty tensors with huge sizes", function()
    it("are legal, as in PyTorch: a zero size makes numel 0 whatever the others", function()
        for _, shape in ipairs({ { 0, 1 << 32, 1 << 32 }, { 1 << 32, 1 << 32, 0 },
            { 1 << 40, 1 << 40, 1 << 40, 0 } }) do
            local z = tide.zeros(shape)
            assert.are.same(shape, z.shape)
            assert.are.equal(0, z:numel())
            assert.are.equal(0, z:sum():item())
        end
    end)

    it("take views, copies and ops without overflowing an offset", function()
        local z = tide.zeros({ 0, 1 << 32, 1 << 32 })
        local p = z:permute(3, 2, 1)
        assert.are.same({ 1 << 32, 1 << 32, 0 }, p.shape)
        assert.are.same({ 1 << 32, 0 }, p:select(1, 1 << 32).shape)
        assert.are.same({ 0, 1 << 32 }, z:select(2, 1 << 32).shape)
        assert.are.same({ 1 << 32, 1 << 32, 0 }, p:contiguous().shape)
        assert.are.same({ 0, 1 << 32, 1 << 32 }, (z + z).shape)
        assert.are.same({ 0, 1 << 32, 1 << 32 }, z:fill_(1).shape)
        assert.are.equal(0, (p * 2):sum():item())
        assert.are.same({ 1 << 32, 1 << 32, 0 }, z:view({ 1 << 32, 1 << 32, 0 }).shape)
        assert.are.same({ 1 << 32, 0, 1 << 32 }, z:reshape({ 1 << 32, 0, 1 << 32 }).shape)
    end)

    it("still refuse a shape without a zero whose element count does not fit", function()
        assert.matches("sanitizer_inputs_spec.lua:%d+: tide: zeros: shape %[4294967296, "
            .. "4294967296, 2%] has more elements than fit in 64 bits",
            catch(function() return tide.zeros({ 1 << 32, 1 << 32, 2 }) end))
    end)
end)

-- vm.overcommit_memory=1 lets the kernel grant any size, untouched: nothing fails there
local function overcommit_always()
    local f = io.open("/proc/sys/vm/overcommit_memory")
    local mode = f and f:read("*n")
    if f then f:close() end
    return mode == 1
end

describe("an allocation no host can give", function()
    it("raises tide's out-of-memory error at the caller's line, and tide goes on", function()
        if overcommit_always() then
            pending("vm.overcommit_memory=1: the kernel grants 32 TiB untouched")
            return
        end
        -- 32 TiB: below tide's own cap, so malloc is asked; under ASan it returns NULL
        -- only with allocator_may_return_null=1 (spec/support/run_asan.sh sets it)
        assert.matches("sanitizer_inputs_spec.lua:%d+: tide: empty: cpu alloc: out of memory "
            .. "allocating 35184372088832 bytes on cpu; free tensors you no longer need or use "
            .. "smaller batches",
            catch(function() return tide.empty({ 1 << 45 }, { dtype = "uint8" }) end))
        assert.are.same({ 1, 1 }, tide.ones(2):totable())
    end)
end)
