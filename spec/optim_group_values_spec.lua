-- A step checks each group's numeric options before it updates anything: a scheduler or the
-- user may set them between steps, and a string met inside the update raised Lua's own
-- "attempt to div a 'string' with a 'number'" from lua/tide/optim/Adam.lua.
local tide = require("tide")
local nn = tide.nn

local function setup(name, opts)
    local m = nn.Linear(2, 2)
    local opt = tide.optim[name](m:parameters(), opts or { lr = 0.1 })
    m.weight.grad = tide.ones(2, 2)
    m.bias.grad = tide.ones(2)
    return m, opt
end

local function fails_unchanged(m, opt, expected)
    local w, b = m.weight:clone(), m.bias:clone()
    local ok, err = pcall(opt.step, opt)
    assert.is_false(ok)
    assert.are.equal(expected, tostring(err):match("tide: .*"))
    assert.is_true(tide.equal(w, m.weight))
    assert.is_true(tide.equal(b, m.bias))
end

describe("an optimizer group's options changed between steps", function()
    it("a string, nil or a tensor where a number goes raises, nothing moved", function()
        for _, name in ipairs({ "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta",
            "Adamax", "NAdam", "RAdam", "ASGD", "Rprop" }) do
            local m, opt = setup(name)
            opt.param_groups[1].lr = "x"
            fails_unchanged(m, opt, "tide: " .. name .. ": step: param_groups[1].lr is \"x\"; " ..
                "expected a number")
            opt.param_groups[1].lr = tide.tensor(0.01)
            fails_unchanged(m, opt, "tide: " .. name .. ": step: param_groups[1].lr is a " ..
                "tensor (its number: lr:item()); expected a number")
            opt.param_groups[1].lr = 0.1
            opt.param_groups[1].weight_decay = nil
            if name ~= "Rprop" then -- Rprop has no weight_decay
                fails_unchanged(m, opt, "tide: " .. name .. ": step: param_groups[1]." ..
                    "weight_decay is nil; expected a number")
            end
        end
    end)

    it("a pair such as betas needs its two numbers", function()
        local m, opt = setup("Adam")
        opt.param_groups[1].betas = { 0.9 }
        fails_unchanged(m, opt, "tide: Adam: step: param_groups[1].betas is {0.9}; expected a " ..
            "list of 2 numbers")
        opt.param_groups[1].betas = { 0.9, "a" }
        fails_unchanged(m, opt, "tide: Adam: step: param_groups[1].betas is {0.9, \"a\"}; " ..
            "expected a list of 2 numbers")
    end)

    it("the second group is named by its place, and a good value steps as before", function()
        local m = nn.Linear(2, 2)
        local opt = tide.optim.SGD({ { params = { m.weight } }, { params = { m.bias } } },
            { lr = 0.5 })
        m.weight.grad, m.bias.grad = tide.ones(2, 2), tide.ones(2)
        opt.param_groups[2].momentum = true
        fails_unchanged(m, opt, "tide: SGD: step: param_groups[2].momentum is true; expected " ..
            "a number")
        opt.param_groups[2].momentum = 0
        local b = m.bias:clone()
        opt:step()
        assert.is_true(tide.equal(m.bias, b - 0.5))
    end)
end)
