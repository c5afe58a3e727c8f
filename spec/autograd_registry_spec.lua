-- autograd_registry_spec.lua — tide.autograd.def, the one registry of the ops autograd
-- differentiates (issue 28): an op of one's own gets its gradients from its def (checked against
-- finite differences and by hand), a def with a missing or misspelt piece fails where it is
-- written, naming the op, and a name is defined once.
local tide = require("tide")
local autograd = require("tide.autograd")
local gradcheck = require("spec.support.gradcheck")

local load_chunk = loadstring or load -- 5.1 and LuaJIT: loadstring
local THIS = "spec/autograd_registry_spec.lua:"

local function f64(t, grad)
    return tide.tensor(t, { dtype = "float64", requires_grad = grad })
end

local function close(t, want, tol)
    local got = t:reshape(-1):totable()
    assert.are.equal(#want, #got)
    for i = 1, #want do
        assert(math.abs(got[i] - want[i]) <= (tol or 1e-9),
            "element " .. i .. ": " .. tostring(got[i]) .. " vs " .. tostring(want[i]))
    end
end

-- the error fn raises, which must carry this file's position and end with msg
local function fails_here(msg, fn, ...)
    local ok, err = pcall(fn, ...)
    assert.is_false(ok)
    assert.are.equal("string", type(err))
    assert.are.equal(THIS, err:sub(1, #THIS), err)
    assert.are.equal(msg, err:match("^[^:]*:%d+: (.*)$"), err)
end

-- each test's op names are its own: a name is defined once
local count = 0
local function fresh(base)
    count = count + 1
    return "spec_" .. base .. "_" .. count
end

describe("autograd.def", function()
    it("defines an op by forward and backward: gradients match finite differences", function()
        local cube = autograd.def {
            name = fresh("cube"),
            reads = { 1 },
            forward = function(_, x)
                return x:mul(x):mul(x)
            end,
            backward = function(nd, g)
                local x = nd[1]
                return g:mul(x:mul(x)):mul(3)
            end,
        }
        assert.are.equal("function", type(cube))
        local x = tide.randn({ 3, 4 }, { dtype = "float64", requires_grad = true })
        assert.is_true(gradcheck(cube, { x }))
        -- and by hand: d/dx sum(x^3) = 3x^2
        local a = f64({ 1, -2, 0.5 }, true)
        cube(a):sum():backward()
        close(a.grad, { 3, 12, 0.75 })
    end)

    it("keeps what forward saves on the node, and routes gradients to several inputs", function()
        -- y = a * b * s for a number s: the forward keeps s on the node
        local scaled = autograd.def {
            name = fresh("scaled_mul"),
            reads = { { 2, 1 }, { 1, 2 } },
            forward = function(nd, a, b, s)
                nd.s = s
                return a:mul(b):mul(s)
            end,
            backward = function(nd, g)
                local a, b = nd[1], nd[2]
                local ga = a.requires_grad and g:mul(b):mul(nd.s) or nil
                local gb = b.requires_grad and g:mul(a):mul(nd.s) or nil
                return ga, gb
            end,
        }
        local a, b = f64({ 1, 2, 3 }, true), f64({ 4, 5, 6 }, true)
        assert.is_true(gradcheck(function(p, q) return scaled(p, q, 0.5) end, { a, b }))
        autograd.set_grad(a, nil)
        autograd.set_grad(b, nil)
        scaled(a, b, 2):sum():backward()
        close(a.grad, { 8, 10, 12 })
        close(b.grad, { 2, 4, 6 })
        -- only b requires grad: a gets nothing, b its gradient
        local c = f64({ 1, 1, 1 }, false)
        local d = f64({ 7, 8, 9 }, true)
        scaled(c, d, 3):sum():backward()
        close(d.grad, { 3, 3, 3 })
        assert.is_nil(c.grad)
    end)

    it("records nothing when no argument requires grad or under no_grad", function()
        local name = fresh("plain")
        local op = autograd.def {
            name = name,
            forward = function(_, x) return x:mul(2) end,
            backward = function(_, g) return g:mul(2) end,
        }
        assert.is_false(op(f64({ 1, 2 }, false)).requires_grad)
        local x = f64({ 1, 2 }, true)
        assert.is_false(tide.no_grad(op, x).requires_grad)
        local y = op(x)
        assert.is_true(y.requires_grad)
        assert.is_true(autograd.has_formula(name))
        -- the node is named after the op, as PyTorch names its own
        assert.are.equal(name:gsub("^%l", string.upper):gsub("_(%w)", string.upper) ..
            "Backward0", tostring(y.grad_fn))
    end)

    it("an op that reads its result and frees its argument", function()
        local myexp = autograd.def {
            name = fresh("exp"),
            reads = { "out" },
            frees = { 1 },
            forward = function(_, x) return x:exp() end,
            backward = function(nd, g) return g:mul(nd.out) end,
        }
        local x = tide.randn({ 5 }, { dtype = "float64", requires_grad = true })
        assert.is_true(gradcheck(myexp, { x }))
        -- through a non-leaf input (the argument is dropped from the node, the edge remains)
        local w = f64({ 0, 1, -1 }, true)
        myexp(w:mul(2)):sum():backward()
        close(w.grad, { 2, 2 * math.exp(2), 2 * math.exp(-2) }, 1e-12)
    end)

    it("a def without forward is recorded by hand with autograd.record", function()
        local name = fresh("twice")
        autograd.def {
            name = name,
            backward = function(nd, g) return g:mul(nd.k) end,
        }
        local function twice(x, k)
            local y = x:detach():mul(k)
            if autograd.needs_record(x) then
                autograd.record(name, y, x).k = k
            end
            return y
        end
        local x = f64({ 1, 2 }, true)
        twice(x, 3):sum():backward()
        close(x.grad, { 3, 3 })
        fails_here("tide: autograd.record: no op 'spec_no_such_op' is defined; declare it with " ..
            "tide.autograd.def", autograd.record, "spec_no_such_op", x:detach(), x)
    end)

    it("the engine checks what reads names: an in-place change after the op raises", function()
        local name = fresh("square")
        local sq = autograd.def {
            name = name,
            reads = { 1 },
            forward = function(_, x) return x:mul(x) end,
            backward = function(nd, g) return g:mul(nd[1]):mul(2) end,
        }
        local x = f64({ 1, 2 }, true)
        local h = x:mul(1)
        local y = sq(h)
        h:add_(1)
        local s = y:sum()
        local ok, err = pcall(s.backward, s)
        assert.is_false(ok)
        assert.truthy(err:find("tide: backward: a tensor needed for the gradient of " .. name ..
            " (its argument 1) was modified in place after it was used", 1, true), err)
    end)

    it("raises at the call for a forward that returns no tensor or its argument", function()
        local name = fresh("bad_forward")
        local op = autograd.def {
            name = name,
            forward = function(_, x, how)
                if how == "same" then
                    return x
                end
                return 42
            end,
            backward = function(_, g) return g end,
        }
        local x = f64({ 1 }, true)
        fails_here("tide: " .. name .. ": forward must return a tensor, got number", op, x)
        fails_here("tide: " .. name .. ": forward returned its argument 1; return a new tensor " ..
            "(x:clone(), or a view such as x:view(x.shape))", op, x, "same")
        -- an error inside forward comes out as it is, with grad mode restored
        local boom = autograd.def {
            name = fresh("boom"),
            forward = function() error("boom", 0) end,
            backward = function(_, g) return g end,
        }
        local ok, err = pcall(boom, x)
        assert.is_false(ok)
        assert.are.equal("boom", err)
        assert.is_true(autograd.is_grad_enabled())
    end)
end)

describe("autograd.def checks its table when it runs", function()
    it("names an unknown key and the op", function()
        fails_here("tide: autograd.def: unknown key 'bakward' for op 'spec_typo'", autograd.def,
            { name = "spec_typo", bakward = function() end })
        fails_here("tide: autograd.def: unknown key 1 for op 'spec_typo'", autograd.def,
            { "x", name = "spec_typo", backward = function() end })
        assert.is_false(autograd.has_formula("spec_typo"))
    end)

    it("names the op without a backward", function()
        fails_here("tide: autograd.def: op 'spec_nobw' has no backward (a function(node, grad) " ..
            "returning the inputs' gradients)", autograd.def, { name = "spec_nobw", reads = { 1 } })
        fails_here("tide: autograd.def: op 'spec_nobw' has no backward (a function(node, grad) " ..
            "returning the inputs' gradients), got a string", autograd.def,
            { name = "spec_nobw", backward = "g" })
        assert.is_false(autograd.has_formula("spec_nobw"))
    end)

    it("names the op with malformed reads or frees", function()
        local bw = function(_, g) return g end
        fails_here("tide: autograd.def: op 'spec_r' expects reads to be a list, got a string",
            autograd.def, { name = "spec_r", reads = "out", backward = bw })
        fails_here("tide: autograd.def: op 'spec_r' expects reads[2] to be an argument index, a " ..
            "field name or {what, when}, got 0", autograd.def,
            { name = "spec_r", reads = { 1, 0 }, backward = bw })
        fails_here("tide: autograd.def: op 'spec_r' expects reads[1] to be an argument index, a " ..
            "field name or {what, when}, got 1 and 'a'", autograd.def,
            { name = "spec_r", reads = { { 1, "a" } }, backward = bw })
        fails_here("tide: autograd.def: op 'spec_r' reads 4 tensors in reads; at most 3",
            autograd.def, { name = "spec_r", reads = { 1, 2, 3, 4 }, backward = bw })
        fails_here("tide: autograd.def: op 'spec_r' both reads and frees argument 1",
            autograd.def, { name = "spec_r", reads = { 1 }, frees = { 1 }, backward = bw })
        fails_here("tide: autograd.def: op 'spec_r' expects frees[1] to be an argument index or " ..
            "a field name, got a boolean", autograd.def,
            { name = "spec_r", frees = { true }, backward = bw })
        fails_here("tide: autograd.def: expected name to be a non-empty string, got a nil",
            autograd.def, { backward = bw })
        fails_here("tide: autograd.def: expected a table {name =, backward =, ...}, got string",
            autograd.def, "spec_r")
        assert.is_false(autograd.has_formula("spec_r"))
    end)

    it("a name is defined once: another file's def of it raises, naming the first", function()
        local other = load_chunk("local autograd, name = ...\n" ..
            "local op = autograd.def { name = name, backward = function(_, g) return g end }\n" ..
            "return op", "=other.lua")
        local ok, err = pcall(other, autograd, "add")
        assert.is_false(ok)
        assert.truthy(err:find("^other%.lua:2: tide: autograd%.def: op 'add' is already " ..
            "defined %(in .*tide/autograd/formulas%.lua%)$"), err)
        -- nn's ops too
        local _ = tide.nn
        ok, err = pcall(other, autograd, "linear")
        assert.is_false(ok)
        assert.truthy(err:find("^other%.lua:2: tide: autograd%.def: op 'linear' is already " ..
            "defined %(in .*tide/nn/_fused%.lua%)$"), err)
        -- this file's op, defined again from another file
        local name = fresh("owned")
        autograd.def { name = name, backward = function(_, g) return g end }
        ok, err = pcall(other, autograd, name)
        assert.is_false(ok)
        assert.truthy(err:find("op '" .. name .. "' is already defined (in " ..
            "spec/autograd_registry_spec.lua)", 1, true), err)
    end)

    it("the file that defined a name may define it again (a module loaded again)", function()
        local name = fresh("reload")
        local op = autograd.def {
            name = name,
            forward = function(_, x) return x:mul(2) end,
            backward = function(_, g) return g:mul(2) end,
        }
        local op2 = autograd.def {
            name = name,
            forward = function(_, x) return x:mul(2) end,
            backward = function(_, g) return g:mul(100) end, -- the new formula
        }
        local x = f64({ 1 }, true)
        op(x):sum():backward()
        close(x.grad, { 100 })
        assert.are_not.equal(op, op2)
    end)
end)

describe("one registry, one no_grad", function()
    it("tide.no_grad is autograd.no_grad", function()
        assert.are.equal(autograd.no_grad, tide.no_grad)
        assert.are.equal(autograd.enable_grad, tide.enable_grad)
    end)

    it("nn's gradients are registry ops; nn reaches autograd by its public face", function()
        local _ = tide.nn.LSTM -- nn's classes load on first use, their ops' formulas with them
        for _, name in ipairs({ "linear", "conv2d", "layer_norm", "rms_norm", "cross_entropy",
            "rnn_cell", "rnn_layer", "col2im", "norm" }) do
            assert.is_true(autograd.has_formula(name), name)
        end
        local p = io.popen and io.popen("ls lua/tide/nn/*.lua lua/tide/*.lua 2>/dev/null")
        local listing = p and p:read("*a") or ""
        if p then
            p:close()
        end
        if listing == "" then
            pending("no directory listing here")
            return
        end
        for path in listing:gmatch("[^\n]+") do
            local f = assert(io.open(path, "rb"))
            local src = f:read("*a")
            f:close()
            assert.is_nil(src:find("tide.autograd.engine", 1, true), path)
            assert.is_nil(src:find("tide.autograd.formulas", 1, true), path)
        end
    end)
end)
