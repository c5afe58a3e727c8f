-- porting_tensor4_spec.lua — PyTorch-porting gaps of the core (survey 2): the dtype names
-- (tide.long, tide.float, ...), t.shape and t:size() as PyTorch's torch.Size (shape[-1], a
-- readable print), "..." in subscripts (t[..., -1]), tide.no_grad() as a decorator and
-- multinomial's positional replacement. Runs under Lua 5.4, 5.1 and LuaJIT. PyTorch 1.13's
-- values are written in with the expression that gave them.
local tide = require("tide")

local T = tide.tensor

local function catch(f, ...)
    local ok, err = pcall(f, ...)
    assert.is_false(ok, "expected an error")
    return err
end

-- err without its position
local function msg(err)
    return (tostring(err):gsub("^.-:%d+: ", ""))
end

local function same_tensor(a, b)
    assert.are.same(a.shape, b.shape)
    assert.are.equal(a.dtype, b.dtype)
    assert.are.same(a:totable(), b:totable())
end

describe("dtype names in the tide namespace", function()
    it("are tide's dtype strings, under PyTorch's names", function()
        local names = {
            float32 = "float32", float = "float32", float64 = "float64", double = "float64",
            float16 = "float16", half = "float16", bfloat16 = "bfloat16", int32 = "int32",
            int = "int32", int64 = "int64", long = "int64", uint8 = "uint8", bool = "bool",
        }
        for k, v in pairs(names) do
            assert.are.equal(v, tide[k], "tide." .. k)
        end
    end)

    it("work wherever a dtype string does", function()
        assert.are.equal("int64", tide.zeros(3, { dtype = tide.long }).dtype)
        assert.are.equal("float32", tide.tensor({ 1 }, { dtype = tide.float }).dtype)
        assert.are.equal("float64", tide.ones(2):to(tide.float64).dtype)
        assert.are.equal("int64", tide.ones(2):type(tide.long).dtype)
        assert.are.equal("bool", tide.ones(2):to(tide.bool).dtype)
        assert.are.equal("float16", tide.ones(2, { dtype = tide.half }).dtype)
        assert.are.equal("bfloat16", tide.ones(2, { dtype = tide.bfloat16 }).dtype)
        assert.are.equal("uint8", tide.ones(2, { dtype = tide.uint8 }).dtype)
        assert.are.equal("int32", tide.ones(2, { dtype = tide.int }).dtype)
        assert.are.equal("float64", tide.ones(2, { dtype = tide.double }).dtype)
        -- x.dtype == torch.long
        assert.is_true(tide.arange(3).dtype == tide.long)
        assert.is_true(tide.ones(2).dtype == tide.float)
    end)
end)

describe("t.shape and t:size() as torch.Size", function()
    local x = tide.zeros(3, 4, 5)

    it("count a negative index from the end", function()
        -- x.shape[-1], x.shape[-3] of torch.zeros(3, 4, 5)
        assert.are.equal(5, x.shape[-1])
        assert.are.equal(4, x.shape[-2])
        assert.are.equal(3, x.shape[-3])
        assert.are.equal(5, x:size()[-1])
        assert.are.equal(3, x:size()[-3])
        -- out of range stays nil, as a positive index past the end
        assert.is_nil(x.shape[-4])
        assert.is_nil(x.shape[4])
        assert.is_nil(x.shape[0])
        assert.is_nil(tide.tensor(1.5).shape[-1])
        assert.is_nil(x.shape[-1.5])
        assert.is_nil(x.shape.n)
        -- x.reshape(-1, x.shape[-1])
        assert.are.same({ 12, 5 }, x:reshape(-1, x.shape[-1]).shape)
    end)

    it("counts an integral float index as the integer, on every Lua", function()
        assert.are.equal(5, x.shape[-1.0])
        assert.are.equal(4, x.shape[2.0])
    end)

    it("tide.Size makes one from a list (torch.Size([2, 3]))", function()
        local s = tide.Size({ 2, 3 })
        assert.are.equal(3, s[-1])
        assert.are.equal("tide.Size({2, 3})", tostring(s))
        assert.are.same({ 2, 3 }, tide.zeros(s).shape)
        local ok, e = pcall(tide.Size, 3)
        assert.is_false(ok)
        assert.matches("tide: Size: expected a list of sizes, got number", e)
    end)

    it("print as PyTorch's", function()
        assert.are.equal("tide.Size({3, 4, 5})", tostring(x.shape))
        assert.are.equal("tide.Size({3, 4, 5})", tostring(x:size()))
        assert.are.equal("tide.Size({})", tostring(tide.tensor(2).shape))
        assert.are.equal("tide.Size({0, 2})", tostring(tide.zeros(0, 2).shape))
    end)

    it("stay a plain list: #, ipairs, concat, unpack, same, JSON", function()
        local s = x.shape
        assert.are.equal(3, #s)
        local seen = {}
        for i, v in ipairs(s) do
            seen[i] = v
        end
        assert.are.same({ 3, 4, 5 }, seen)
        local keys = 0
        for _ in pairs(s) do
            keys = keys + 1
        end
        assert.are.equal(3, keys)
        assert.are.equal("3x4x5", table.concat(s, "x"))
        local a, b, c = (table.unpack or unpack)(s)
        assert.are.same({ 3, 4, 5 }, { a, b, c })
        assert.are.same({ 3, 4, 5 }, x.shape)
        assert.are.same(x.shape, { 3, 4, 5 })
        assert.are.same(x:size(), x.shape)
        assert.are.same({}, tide.tensor(1).shape)
        assert.are_not.same({ 3, 4 }, x.shape)
        assert.are.equal("[\n  3,\n  4,\n  5\n]", require("tide.models._json").encode(s))
        local ok, dkjson = pcall(require, "dkjson")
        if ok then
            assert.are.equal("[3,4,5]", dkjson.encode(s))
        end
    end)

    it("pass back as a shape", function()
        assert.are.same({ 3, 4, 5 }, tide.zeros(x.shape).shape)
        assert.are.same({ 3, 4, 5 }, tide.ones(x:size()).shape)
        assert.are.same({ 3, 4, 5 }, tide.arange(60):view(x.shape).shape)
        assert.are.same({ 3, 4, 5 }, tide.arange(60):reshape(x:size()).shape)
        assert.are.same({ 3, 4, 5 }, tide.ones(5):expand(x.shape).shape)
        assert.are.same({}, tide.ones(1):reshape(tide.tensor(7).shape).shape)
        -- a checkpoint keeps it as a list
        local path = os.tmpname()
        tide.save(path, { shape = x.shape })
        local back = tide.load(path)
        os.remove(path)
        assert.are.same({ 3, 4, 5 }, back.shape)
    end)

    it("are a fresh table each time, the user's to change", function()
        local s = x.shape
        assert.is_false(rawequal(s, x.shape))
        s[1] = 9
        s[#s + 1] = 7
        assert.are.same({ 9, 4, 5, 7 }, s)
        assert.are.equal(7, s[-1]) -- counted from the table's own end
        assert.are.same({ 3, 4, 5 }, x.shape)
        s[-1] = 2 -- a key the user sets is the user's
        assert.are.equal(2, s[-1])
        assert.are.equal(3, x:size(1)) -- size(dim) is still the number
        assert.are.equal(5, x:size(-1))
    end)
end)

describe('"..." in subscripts (PyTorch\'s Ellipsis)', function()
    local x = tide.arange(1, 25):reshape(2, 3, 4)

    it("reads as many whole dims as the other indices leave", function()
        -- x[..., -1]: as x[:, :, -1]
        same_tensor(x[{ {}, {}, -1 }], x[{ "...", -1 }])
        assert.are.same({ { 4, 8, 12 }, { 16, 20, 24 } }, x[{ "...", -1 }]:totable())
        same_tensor(x[2], x[{ 2, "..." }]) -- x[1, ...]
        same_tensor(x[{ 2, {}, 3 }], x[{ 2, "...", 3 }]) -- x[1, ..., 2]
        same_tensor(x[{ 1, 2, 3 }], x[{ 1, 2, "...", 3 }]) -- "..." for no dim
        same_tensor(x, x[{ "..." }]) -- x[...]
        same_tensor(x[{ {}, {}, { 2, 3 } }], x[{ "...", { 2, 3 } }]) -- x[..., 1:3]
        local idx = T({ 1, 4 })
        same_tensor(x[{ {}, {}, idx }], x[{ "...", idx }]) -- x[..., [0, 3]]
        -- a view, as x[..., -1] in PyTorch
        local y = tide.zeros(2, 3)
        y[{ "...", 1 }]:fill_(5)
        assert.are.same({ { 5, 0, 0 }, { 5, 0, 0 } }, y:totable())
    end)

    it("writes the same elements", function()
        local y = tide.zeros(2, 3)
        y[{ "...", -1 }] = 7 -- y[..., -1] = 7
        assert.are.same({ { 0, 0, 7 }, { 0, 0, 7 } }, y:totable())
        y[{ 1, "..." }] = T({ 1, 2, 3 }) -- y[0, ...] = torch.tensor([1, 2, 3])
        assert.are.same({ { 1, 2, 3 }, { 0, 0, 7 } }, y:totable())
        y[{ "...", T({ 1, 2 }) }] = 4 -- y[..., [0, 1]] = 4
        assert.are.same({ { 4, 4, 3 }, { 4, 4, 7 } }, y:totable())
    end)

    it("raises for two, or for too many indices besides", function()
        assert.are.equal('tide: index: an index holds at most one "..." (indices 1 and 3 are)',
            msg(catch(function() return x[{ "...", 1, "..." }] end)))
        assert.are.equal('tide: setindex: an index holds at most one "..." (indices 1 and 2 are)',
            msg(catch(function() x[{ "...", "..." }] = 1 end)))
        assert.are.equal('tide: index: 4 indices besides "..." for a tensor of 3 dims',
            msg(catch(function() return x[{ 1, 1, "...", 1, 1 }] end)))
        -- a string other than "..." and "newaxis" is refused as before
        assert.are.equal("tide: index: index 2 must be a number, a range table, a tensor, " ..
            "\"...\" or tide.newaxis, got \"..\"", msg(catch(function() return x[{ 1, ".." }] end)))
    end)

    it("tide.newaxis is PyTorch's None in an index: a new dim of size 1 there", function()
        local x = tide.arange(1, 7):reshape(2, 3)
        -- x[None, ...], x[:, None], x[None, :, None, :] and x[..., None] (PyTorch's shapes)
        assert.are.same({ 1, 2, 3 }, x[{ tide.newaxis, "..." }].shape)
        assert.are.same({ 2, 1, 3 }, x[{ {}, tide.newaxis }].shape)
        assert.are.same({ 1, 2, 1, 3 }, x[{ "newaxis", {}, "newaxis", {} }].shape)
        assert.are.same({ 2, 3, 1 }, x[{ "...", tide.newaxis }].shape)
        -- with a number and a range: x[1, None, 0:2] is [[4, 5]]
        assert.are.same({ { 4, 5 } }, x[{ 2, tide.newaxis, { 1, 2 } }]:totable())
        -- a view: writes through, and the attention-mask idiom m[:, None, None, :]
        local m = tide.ones(2, 4)
        assert.are.same({ 2, 1, 1, 4 }, m[{ {}, tide.newaxis, tide.newaxis, {} }].shape)
        x[{ tide.newaxis, 1 }] = 0
        assert.are.same({ { 0, 0, 0 }, { 4, 5, 6 } }, x:totable())
        -- it takes none of x's dims: three entries besides it still raise
        assert.are.equal("tide: index: 3 indices for a tensor of 2 dims",
            msg(catch(function() return x[{ 1, tide.newaxis, 1, 1 }] end)))
        local w = tide.ones(2, 3):requires_grad_()
        w[{ tide.newaxis }]:sum():backward()
        assert.are.same({ { 1, 1, 1 }, { 1, 1, 1 } }, w.grad:totable())
    end)
end)

describe("no_grad(), enable_grad(), inference_mode() as decorators", function()
    it("no_grad() wraps a function to run without recording", function()
        local w = tide.ones(2, { requires_grad = true })
        -- @torch.no_grad() def generate(a, b): ...
        local generate = tide.no_grad()(function(a, b)
            return tide.is_grad_enabled(), w * a, b
        end)
        local enabled, y, b = generate(3, "b")
        assert.is_false(enabled)
        assert.is_false(y.requires_grad)
        assert.are.same({ 3, 3 }, y:totable())
        assert.are.equal("b", b)
        assert.is_true(tide.is_grad_enabled())
        assert.is_true((w * 3).requires_grad)
        assert.are.equal(tide.autograd.no_grad, tide.no_grad)
    end)

    it("restores the mode when the function raises, and checks what it wraps", function()
        local f = tide.no_grad()(function() error("boom", 0) end)
        assert.are.equal("boom", catch(f))
        assert.is_true(tide.is_grad_enabled())
        assert.are.equal("tide: no_grad: expected a function, got number",
            msg(catch(function() return tide.no_grad()(5) end)))
        -- no_grad(nil) is a missing function, not a decorator
        assert.are.equal("tide: no_grad: expected a function, got nil",
            msg(catch(function() return tide.no_grad(nil) end)))
    end)

    it("enable_grad() records inside no_grad", function()
        local w = tide.ones(2, { requires_grad = true })
        local f = tide.enable_grad()(function(a) return w * a end)
        local y = tide.no_grad(f, 2)
        assert.is_true(y.requires_grad)
        assert.are.equal("tide: enable_grad: expected a function, got string",
            msg(catch(function() return tide.enable_grad()("f") end)))
    end)

    it("inference_mode() and inference_mode(false)", function()
        local f = tide.inference_mode()(function(a)
            return tide.is_inference_mode_enabled(), tide.is_grad_enabled(), a
        end)
        assert.are.same({ true, false, 4 }, { f(4) })
        local g = tide.inference_mode(false)(function()
            return tide.is_inference_mode_enabled(), tide.is_grad_enabled()
        end)
        assert.are.same({ false, true }, { tide.inference_mode(g) })
        assert.is_false(tide.is_inference_mode_enabled())
        assert.are.equal("tide: inference_mode: expected a function, got number",
            msg(catch(function() return tide.inference_mode(true)(1) end)))
        assert.are.equal("tide: inference_mode: expected a function (or a boolean mode, then " ..
            "a function), got nil", msg(catch(function() return tide.inference_mode(nil) end)))
    end)
end)

describe("multinomial(input, num_samples, replacement)", function()
    local p = T({ 0.2, 0.3, 0.5 })

    local function draw(f)
        tide.manual_seed(7)
        return f():totable()
    end

    it("takes replacement by position, as PyTorch", function()
        local want = draw(function() return tide.multinomial(p, 6, { replacement = true }) end)
        assert.are.same(want, draw(function() return tide.multinomial(p, 6, true) end))
        assert.are.same(want, draw(function() return p:multinomial(6, true) end))
        local without = draw(function() return tide.multinomial(p, 3) end)
        assert.are.same(without, draw(function() return tide.multinomial(p, 3, false) end))
        assert.are.same(without, draw(function() return p:multinomial(3, false, {}) end))
        -- without replacement each category comes once
        local s = tide.multinomial(p, 3, false):sort():totable()
        assert.are.same({ 1, 2, 3 }, s)
    end)

    it("with a generator after it", function()
        local g = tide.Generator():manual_seed(3)
        local want = tide.multinomial(p, 5, { replacement = true, generator = g }):totable()
        g:manual_seed(3)
        assert.are.same(want, tide.multinomial(p, 5, true, { generator = g }):totable())
        g:manual_seed(3)
        assert.are.same(want, p:multinomial(5, true, { generator = g }):totable())
    end)

    it("refuses replacement given twice, or not a boolean", function()
        assert.are.equal("tide: multinomial: replacement given twice, as argument #3 and by " ..
            "name; pass it once",
            msg(catch(function() return tide.multinomial(p, 2, true, { replacement = true }) end)))
        assert.are.equal("tide: multinomial: replacement (argument #3) must be a boolean or " ..
            "an options table such as {replacement = true}, got number",
            msg(catch(function() return tide.multinomial(p, 2, 1) end)))
        assert.are.equal("tide: multinomial: options must be a table such as " ..
            "{replacement = true}, got number",
            msg(catch(function() return tide.multinomial(p, 2, true, 1) end)))
    end)
end)

describe("PyTorch's dtypes that tide lacks", function()
    it("are named, so they raise instead of taking the default", function()
        assert.are.equal("int16", tide.short)
        local ok, e = pcall(tide.zeros, 2, { dtype = tide.int16 })
        assert.is_false(ok)
        assert.matches('tide: zeros: unknown dtype int16; use "float32"', e)
        -- complex32 (chalf) is named but lacking; complex64 / complex128 are the Lua class of
        -- lua/tide/complex (spec/complex_spec.lua)
        ok, e = pcall(tide.tensor, { 1 }, { dtype = tide.complex32 })
        assert.is_false(ok)
        assert.matches("tide: tensor: expected a complex dtype %(complex64, complex128%), got " ..
            "complex32", e)
    end)
end)

describe("PyTorch's small names: shapes compared by value, torch.inf and the constants", function()
    it("x.shape == y.shape compares the sizes", function()
        -- ch04 of LLMs-from-scratch: if self.use_shortcut and x.shape == layer_output.shape
        assert.is_true(tide.zeros(2, 3).shape == tide.ones(2, 3).shape)
        assert.is_false(tide.zeros(2, 3).shape == tide.ones(3, 2).shape)
        assert.is_false(tide.zeros(2).shape == tide.zeros(2, 1).shape)
        assert.is_true(tide.zeros(2, 3):size() == tide.Size({ 2, 3 }))
        assert.is_true(tide.zeros(2).shape ~= tide.zeros(3).shape)
        assert.is_true(tide.zeros().shape == tide.tensor(1).shape)
    end)

    it("x.shape == {2, 3} compares a plain list too #lua53", function()
        assert.is_true(tide.zeros(2, 3).shape == { 2, 3 })
        assert.is_false(tide.zeros(2, 3).shape == { 2 })
    end)

    it("tide.inf, tide.nan, tide.pi, tide.e; tide.where with every parameter by name", function()
        assert.are.equal(math.huge, tide.inf)
        assert.is_true(tide.nan ~= tide.nan)
        assert.are.equal(math.pi, tide.pi)
        assert.is_true(math.abs(tide.e - 2.718281828459045) < 1e-15)
        -- torch.where(condition=c, input=x, other=y)
        local c = tide.tensor({ true, false, true })
        assert.are.same({ 1, 0, 1 }, tide.where({ condition = c, input = tide.ones(3),
            other = tide.zeros(3) }):totable())
    end)
end)
