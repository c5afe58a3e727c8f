-- torch_names_spec.lua — state_dicts convert one to one between PyTorch and tide (issue 13):
-- the names are PyTorch's except the children of Sequential/ModuleList, which Lua counts from
-- 1; tide.nn.utils.state_dict_from_torch / state_dict_to_torch shift those indices.
-- (spec/seq_spec.lua loads PyTorch-exported weights through state_dict_from_torch.)
local tide = require("tide")
local nn = require("tide.nn")
local utils = nn.utils

describe("state_dict names and PyTorch's", function()
    it("shifts every list index, and only those", function()
        local w, b = tide.zeros(2), tide.ones(2)
        local sd = utils.state_dict_from_torch({
            ["layers.0.self_attn.in_proj_weight"] = w,
            ["0.weight"] = b,
            ["encoder.layers.10.linear1.bias"] = w,
            ["weight_ih_l0"] = b, -- part of a name, not an index
            ["bn.num_batches_tracked"] = w,
        })
        assert.are.equal(w, sd["layers.1.self_attn.in_proj_weight"])
        assert.are.equal(b, sd["1.weight"])
        assert.are.equal(w, sd["encoder.layers.11.linear1.bias"])
        assert.are.equal(b, sd["weight_ih_l0"])
        assert.are.equal(w, sd["bn.num_batches_tracked"])
        local n = 0
        for _ in pairs(sd) do
            n = n + 1
        end
        assert.are.equal(5, n)
    end)

    it("round-trips a model's state_dict through PyTorch's names", function()
        local model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
        local torch_sd = utils.state_dict_to_torch(model:state_dict())
        assert.is_not_nil(torch_sd["0.weight"])
        assert.is_not_nil(torch_sd["2.bias"])
        assert.is_nil(torch_sd["1.weight"])
        local copy = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
        copy:load_state_dict(utils.state_dict_from_torch(torch_sd))
        local x = tide.randn(5, 3)
        assert.are.same(model(x):totable(), copy(x):totable())
    end)

    it("refuses what is not a tide state_dict", function()
        assert.has_error(function()
            utils.state_dict_to_torch({ ["layers.0.weight"] = tide.zeros(1) })
        end, "tide: state_dict_to_torch: key \"layers.0.weight\" has a list index 0, but "
            .. "tide's lists count from 1: is this state_dict PyTorch's already?")
        local ok, err = pcall(utils.state_dict_from_torch, 42)
        assert.is_false(ok)
        assert.matches("torch_names_spec%.lua:%d+: tide: state_dict_from_torch: expected a "
            .. "state_dict %(a table of name = tensor%), got number", err)
    end)
end)
