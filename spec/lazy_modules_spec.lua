-- lazy_modules_spec.lua — nn.LazyLinear and nn.LazyConv1d/2d/3d (PyTorch's): the input size
-- read from the first input, the same parameters as the plain layer made at that moment with
-- the same generator position, the class becoming that layer's, the device and dtype a
-- model:to gave it before, and the arguments checked at construction without drawing.
local tide = require("tide")
local nn = tide.nn
local D = require("spec.support.device")

local DEV = D.name

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

local function same(a, b)
    return (a:to("cpu") - b:to("cpu")):abs():max():item() == 0
end

describe("lazy modules (" .. DEV .. ")", function()
    it("LazyLinear becomes the Linear its first input sizes", function()
        local x = tide.randn({ 2, 5 }, { dtype = "float64", device = DEV })
        local lazy = nn.LazyLinear(3):to(DEV):to("float64")
        assert.are.equal(0, lazy:num_parameters())
        tide.manual_seed(11)
        local y = lazy(x)
        tide.manual_seed(11)
        local plain = nn.Linear(5, 3):to(DEV):to("float64")
        assert.is_true(same(plain.weight, lazy.weight) and same(plain.bias, lazy.bias))
        assert.is_true(same(plain(x), y))
        assert.are.equal(nn.Linear, getmetatable(lazy))
        assert.are.equal("float64", lazy.weight.dtype)
        assert.are.equal(DEV, tostring(lazy.weight.device))
        assert.are.equal(5, lazy.in_features)
        local keys = {}
        for k in pairs(lazy:state_dict()) do
            keys[#keys + 1] = k
        end
        table.sort(keys)
        assert.are.same({ "bias", "weight" }, keys)
    end)

    it("LazyConv1d/2d/3d take in_channels from dim 2; modes and hooks are kept", function()
        for nd, cls in ipairs({ "LazyConv1d", "LazyConv2d", "LazyConv3d" }) do
            local shape = { 2, 3 }
            for _ = 1, nd do
                shape[#shape + 1] = 5
            end
            local x = tide.randn(shape, { device = DEV })
            local m = nn.Sequential(nn[cls](4, 3, { padding = 1 })):to(DEV)
            m:eval()
            local seen = 0
            m[1]:register_forward_hook(function() seen = seen + 1 end)
            local y = m(x)
            assert.are.equal(4, y:size(2))
            assert.are.equal(3, m[1].in_channels, cls)
            assert.is_false(m[1].training)
            assert.are.equal(1, seen)
            assert.are.equal(cls:sub(5), m[1].__name)
        end
    end)

    it("checks its arguments at construction, drawing nothing", function()
        tide.manual_seed(3)
        local a = tide.rand(1):item()
        tide.manual_seed(3)
        nn.LazyLinear(4)
        assert.are.equal(a, tide.rand(1):item())
        assert.matches("tide: LazyLinear: expected out_features to be an integer >= 1, got 0",
            catch(function() nn.LazyLinear(0) end), 1, true)
        assert.matches("tide: LazyConv2d: expected a 4-D input {N, C, H, W} or a 3-D {C, H, " ..
            "W}, got 2 dims", catch(function() nn.LazyConv2d(4, 3)(tide.randn(5, 5)) end), 1, true)
        assert.matches("tide: LazyLinear: expected an input with at least 1 dim",
            catch(function() nn.LazyLinear(2)(tide.tensor(1.5)) end), 1, true)
    end)
end)
