-- error_positions_spec.lua — where tide's errors point (issue 27): an error raised inside tide
-- through the user's tail calls (`return data.TensorDataset(a, b)`) names the nearest user line
-- (a Lua function called in tail position takes its caller's frame, so that line is the
-- caller's), and a hook's error raised again by backward / autograd.grad carries exactly one
-- position (the hook's own when the error came from its line). The user code is a chunk loaded
-- as "=user.lua", so the expected lines are known; each is found by its marker comment.
local tide = require("tide")
local data = require("tide.data")
local autograd = require("tide.autograd")

local load_chunk = loadstring or load -- 5.1 and LuaJIT: load takes no string

-- the chunk's function, and the line of each "-- @name" marker in src
local function chunk(src)
    local lines, at = 0, {}
    for line in (src .. "\n"):gmatch("([^\n]*)\n") do
        lines = lines + 1
        local name = line:match("%-%- @([%w_]+)")
        if name then
            at[name] = lines
        end
    end
    local f = assert(load_chunk(src, "=user.lua"))
    return f(tide, data, autograd), at
end

local function fails_with(expected, f, ...)
    local ok, err = pcall(f, ...)
    assert.is_false(ok, "expected an error")
    assert.are.equal(expected, err)
end

describe("an error raised through the user's tail calls", function()
    local U, at = chunk([[
local tide, data = ...
local unpack = table.unpack or unpack
local U = {}
function U.dataset(a, b)
    return data.TensorDataset(a, b)
end
function U.dataset_twice(a, b)
    return U.dataset(a, b)
end
function U.loader(ds)
    return data.DataLoader(ds, { batch_size = 0 })
end
function U.no_grad(v)
    return tide.no_grad(v)
end
function U.relu(v)
    return tide.nn.functional.relu(v)
end
function U.backward(t)
    return t:backward()
end
function U.call(f, ...)
    local r = f(...) -- @caller
    return r
end
function U.protected(f, ...)
    local args = { ... }
    local ok, err = pcall(function() -- @protected
        return f(unpack(args))
    end)
    return err
end
function U.direct(a, b)
    local ds = data.TensorDataset(a, b) -- @direct
    return ds
end
return U
]])
    local where = "user.lua:" .. at.caller .. ": "
    local mismatch = "tide: TensorDataset: tensor 2 has 3 samples (size of dim 1) but tensor 1 " ..
        "has 2; every tensor needs the same size in dim 1"

    it("TensorDataset: the caller's line (a tail call leaves no line of its own)", function()
        fails_with(where .. mismatch, U.call, U.dataset, tide.zeros(2), tide.zeros(3))
    end)

    it("through two tail calls: still the nearest user line", function()
        fails_with(where .. mismatch, U.call, U.dataset_twice, tide.zeros(2), tide.zeros(3))
    end)

    it("without a tail call: the line of the call itself, as before", function()
        fails_with("user.lua:" .. at.direct .. ": " .. mismatch, U.direct, tide.zeros(2),
            tide.zeros(3))
    end)

    it("DataLoader, no_grad, nn.functional and backward alike", function()
        local ds = data.TensorDataset(tide.zeros(4))
        fails_with(where .. "tide: DataLoader: batch_size = 0; expected an integer >= 1",
            U.call, U.loader, ds)
        fails_with(where .. "tide: no_grad: expected a function, got number", U.call, U.no_grad, 5)
        fails_with(where .. "tide: relu: expected input to be a tensor, got string", U.call,
            U.relu, "x")
        local t = tide.tensor({ 1.0, 2.0 }, { dtype = "float64", requires_grad = true }):mul(2)
        fails_with(where .. "tide: backward: grad can be implicitly created only for a " ..
            "one-element tensor, got shape {2}; pass a gradient: t:backward(grad)", U.call,
            U.backward, t)
    end)

    it("a function pcall runs that ends in a tail call: the line that called pcall", function()
        -- the issue's case: pcall(function() return data.TensorDataset(a, b) end) had no
        -- position, the frame a fixed error level named being pcall's own
        local here = "user.lua:" .. at.protected .. ": "
        assert.are.equal(here .. mismatch, U.protected(data.TensorDataset, tide.zeros(2),
            tide.zeros(3)))
        local t = tide.tensor({ 1.0, 2.0 }, { dtype = "float64", requires_grad = true }):mul(2)
        assert.are.equal(here .. "tide: backward: grad can be implicitly created only for a " ..
            "one-element tensor, got shape {2}; pass a gradient: t:backward(grad)",
            U.protected(t.backward, t))
        assert.are.equal(here .. "tide: no_grad: expected a function, got number",
            U.protected(tide.no_grad, 5))
        assert.are.equal(here .. "tide: DataLoader: batch_size = 0; expected an integer >= 1",
            U.protected(data.DataLoader, data.TensorDataset(tide.zeros(4)), { batch_size = 0 }))
    end)

    it("called straight from pcall (a C frame): the nearest line that has one", function()
        -- pcall's own frame has no line: the position is the line that called pcall
        local line = debug.getinfo(1, "l").currentline + 1
        local ok, err = pcall(U.dataset, tide.zeros(2), tide.zeros(3))
        assert.is_false(ok)
        assert.are.equal("spec/error_positions_spec.lua:" .. line .. ": " .. mismatch, err)
    end)
end)

describe("a hook's error raised again by backward and autograd.grad", function()
    local U, at = chunk([[
local tide, data, autograd = ...
local U = {}
local HOOKS = {
    tide_lua = function(g)
        local r = tide.nn.functional.relu("x") -- @tide_lua
        return r
    end,
    tide_c = function(g)
        local r = g:add(tide.zeros(3, { dtype = "float64" })) -- @tide_c
        return r
    end,
    plain = function(g)
        error("boom") -- @plain
    end,
    no_position = function(g)
        error("tide: my hook: refused", 0)
    end,
    bad_shape = function(g)
        return tide.zeros(3, { dtype = "float64" })
    end,
    table = function(g)
        error(U.token)
    end,
}
U.token = { what = "a table error" }
local function graph(kind, leaf)
    local x = tide.tensor({ 1.0, 2.0 }, { dtype = "float64", requires_grad = true })
    if leaf then
        x:register_hook(HOOKS[kind])
    end
    local y = x:mul(3)
    if not leaf then
        y:register_hook(HOOKS[kind])
    end
    return x, y:sum()
end
function U.backward(kind, leaf)
    local _, s = graph(kind, leaf)
    s:backward() -- @backward
end
function U.grad(kind, leaf)
    local x, s = graph(kind, leaf)
    local g = autograd.grad(s, x) -- @grad
    return g
end
return U
]])
    local function pos(name)
        return "user.lua:" .. at[name] .. ": "
    end

    for _, leaf in ipairs({ false, true }) do
        local on = leaf and " (a leaf's hook)" or " (a non-leaf's hook)"
        -- autograd.grad captures a leaf's gradient without running the leaf's hooks
        for _, call in ipairs(leaf and { "backward" } or { "backward", "grad" }) do
            local f = U[call]
            it(call .. ": a tide error from the hook's line keeps that one position" .. on,
                function()
                    fails_with(pos("tide_lua") .. "tide: relu: expected input to be a tensor, " ..
                        "got string", f, "tide_lua", leaf)
                    fails_with(pos("tide_c") .. "tide: add: shapes [2] and [3] cannot be " ..
                        "broadcast: size 2 vs 3 at dim 1", f, "tide_c", leaf)
                end)
            it(call .. ": any error from the hook's line keeps its one position" .. on, function()
                fails_with(pos("plain") .. "boom", f, "plain", leaf)
            end)
            it(call .. ": an error without a position gets the caller's line" .. on, function()
                fails_with(pos(call) .. "tide: my hook: refused", f, "no_position", leaf)
                fails_with(pos(call) .. "tide: register_hook: a hook returned a gradient of " ..
                    "shape {3} for a tensor of shape {2}", f, "bad_shape", leaf)
            end)
            it(call .. ": an error value that is not a string comes back as it is" .. on,
                function()
                    local ok, err = pcall(f, "table", leaf)
                    assert.is_false(ok)
                    assert.are.equal(U.token, err)
                end)
        end
    end
end)
