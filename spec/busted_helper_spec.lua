-- busted_helper_spec.lua — the suite's busted helper (spec/support/busted_helper.lua): standard
-- globals are _G's own, assigning one is refused, and a spec's own globals still resolve per block.
describe("the busted helper's standard globals", function()
    describe("in a nested block", function()
        it("reads math, type and tostring from _G", function()
            assert.are.equal(rawget(_G, "math"), math)
            assert.are.equal(rawget(_G, "type"), type)
            assert.are.equal(rawget(_G, "tostring"), tostring)
        end)

        it("keeps busted's assert (luassert), not Lua's", function()
            assert.is_table(assert)
            assert.are_not.equal(rawget(_G, "assert"), assert)
        end)

        it("refuses a spec's assignment of a standard global, naming it", function()
            local ok, err = pcall(function() string = {} end) -- luacheck: ignore
            assert.is_false(ok)
            assert.matches("spec assigns the global string: make it a local", err, 1, true)
            assert.are.equal(rawget(_G, "string"), string)
        end)

        it("keeps a spec's own global in the block that set it", function()
            helper_spec_value = 42 -- luacheck: ignore
            assert.are.equal(42, helper_spec_value) -- luacheck: ignore
            assert.is_nil(rawget(_G, "helper_spec_value"))
        end)
    end)
end)
