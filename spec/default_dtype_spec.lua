-- default_dtype_spec.lua — tide.set_default_dtype / get_default_dtype, PyTorch's default dtype:
-- with "float64", what PyTorch 1.13 makes float64 after torch.set_default_dtype(torch.float64)
-- is float64 here too (checked against it on the same calls): new float tensors without a
-- dtype, the nn layers' parameters, and integers or numbers promoted to a float (exp of an int
-- tensor, an int tensor plus 1.5, the core's rows and the Lua-written ops alike); integers stay
-- int64, and t:float() stays float32. Each test puts float32 back, even when it fails.
local tide = require("tide")
local D = require("spec.support.device")

local DEV = D.name

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

-- fn() with the default dtype set to dt, float32 restored whatever happens
local function with_default(dt, fn)
    tide.set_default_dtype(dt)
    local ok, err = pcall(fn)
    tide.set_default_dtype("float32")
    if not ok then
        error(err, 0)
    end
end

describe("the default dtype (" .. DEV .. ")", function()
    it("starts as float32 and takes float64", function()
        assert.are.equal("float32", tide.get_default_dtype())
        with_default("float64", function()
            assert.are.equal("float64", tide.get_default_dtype())
        end)
        assert.are.equal("float32", tide.get_default_dtype())
    end)

    it("is the dtype of new float tensors, as PyTorch's", function()
        with_default("float64", function()
            local o = { device = DEV }
            assert.are.equal("float64", tide.tensor({ 1.5 }, o).dtype)
            assert.are.equal("int64", tide.tensor({ 1, 2 }, o).dtype)
            for _, t in ipairs({ tide.zeros(2, o), tide.ones(2, o), tide.empty(2, o), tide.rand(2, o),
                tide.randn(2, o), tide.arange(0, 1, 0.5, o), tide.full({ 2 }, 1.5, o), tide.eye(2, o),
                tide.linspace(0, 1, 3, o), tide.logspace(0, 1, 3, o), tide.hann_window(4, o),
                tide.normal(0, 1, { 2 }) }) do
                assert.are.equal("float64", t.dtype)
            end
            assert.are.equal("int64", tide.arange(3, o).dtype)
            assert.are.equal("int64", tide.full({ 2 }, 2, o).dtype)
            assert.are.equal("float32", tide.zeros(2, { dtype = "float32", device = DEV }).dtype)
        end)
    end)

    it("is what integers and numbers promote to", function()
        with_default("float64", function()
            local i = tide.tensor({ 1, 2 }, { device = DEV })
            assert.are.equal("float64", i:exp().dtype)
            assert.are.equal("float64", (i + 1.5).dtype)
            assert.are.equal("float64", (i / i).dtype)
            assert.are.equal("float64", i:clamp(0.5, 1.5).dtype)
            assert.are.equal("float64", i:softmax(1).dtype)
            assert.are.equal("float64", tide.where(i:gt(1), 1.5, 2.5).dtype)
            assert.are.equal("float64", i:sinc().dtype)
            assert.are.equal("float64", tide.special.ndtr(i).dtype)
            assert.are.equal("float64", tide.trapezoid(i).dtype)
            assert.are.equal("float64", i:logsumexp(1).dtype)
            assert.are.equal("float64", tide.result_type(i, 1.5))
            -- an explicit conversion is what it says
            assert.are.equal("float32", i:float().dtype)
            -- the values are float64's: 1/3 is not float32's rounding of it
            assert.are.equal(1 / 3, (tide.tensor({ 1 }, { device = DEV }) / 3):item())
        end)
    end)

    it("is the dtype of the nn layers' parameters and of the distributions' numbers", function()
        with_default("float64", function()
            local l = tide.nn.Linear(2, 3)
            assert.are.equal("float64", l.weight.dtype)
            assert.are.equal("float64", l.bias.dtype)
            assert.are.equal("float64", tide.nn.Conv2d(1, 2, 3).weight.dtype)
            assert.are.equal("float64", tide.nn.LayerNorm(4).weight.dtype)
            assert.are.equal("float64",
                tide.nn.Transformer.generate_square_subsequent_mask(2).dtype)
            assert.are.equal("float64", tide.distributions.Normal(0, 1).loc.dtype)
            assert.are.equal("float64", l(tide.ones(4, 2)).dtype)
        end)
        assert.are.equal("float32", tide.nn.Linear(2, 3).weight.dtype)
    end)

    it("refuses what PyTorch refuses", function()
        assert.matches('tide: set_default_dtype: the default dtype is "float32" or "float64", ' ..
            "got int64", catch(function() tide.set_default_dtype("int64") end), 1, true)
        assert.matches('tide: set_default_dtype: the default dtype is "float32" or "float64", ' ..
            "got float8", catch(function() tide.set_default_dtype("float8") end), 1, true)
        assert.matches("tide: set_default_dtype: the dtype must be a string, got nil",
            catch(function() tide.set_default_dtype() end), 1, true)
        assert.are.equal("float32", tide.get_default_dtype())
    end)
end)
