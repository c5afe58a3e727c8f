-- save_module_spec.lua — tide.save(model, f) / tide.load(f) as PyTorch's torch.save(model, f)
-- and torch.load(f) of a whole module: the class found again by its name (tide.nn's, or one
-- made by nn.Module:extend("Name")), every field, parameters as parameters, buffers, the
-- training flag, tied weights and shared children, tide's functions by name, devices; and the
-- errors: code (a closure, a hook), a class without a name, a class not defined at load.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional

local function tmp()
    return os.tmpname() .. ".safetensors"
end

local function same_values(a, b)
    assert.are.equal(0, (a - b):abs():max():item())
end

-- class Net(nn.Module) with a child list, a tied weight, a number, a string and a buffer
local Net = nn.Module:extend("SaveModuleNet")
function Net:init(n)
    nn.Module.init(self)
    self.emb = nn.Embedding(n, 4)
    self.body = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4))
    self.norm = nn.BatchNorm1d(4)
    self.head = nn.Linear(4, n, { bias = false })
    self.head.weight = self.emb.weight -- tied, as a language model's decoder
    self.scale = 0.5
    self.name = "net"
end
function Net:forward(ids)
    return self.head(self.norm(self.body(self.emb(ids))) * self.scale)
end

describe("tide.save(model) and tide.load: a whole module, as torch.save/torch.load", function()
    it("rebuilds the class, its fields, parameters, buffers and sharing; it trains on", function()
        tide.manual_seed(1)
        local m = Net(6)
        local ids = tide.tensor({ 1, 2, 3, 4, 5 })
        m(ids) -- running stats move
        m:eval()
        local want = m(ids)
        local path = tmp()
        tide.save(m, path) -- torch.save(model, PATH)
        local got = tide.load(path) -- model = torch.load(PATH)
        os.remove(path)
        assert.are.equal(Net, getmetatable(got))
        assert.is_true(tide.isinstance(got, Net) and tide.isinstance(got.body[1], nn.Linear))
        assert.are.equal(0.5, got.scale)
        assert.are.equal("net", got.name)
        assert.is_false(got.training)
        assert.is_false(got.body[1].training)
        same_values(want, got(ids))
        -- the tied weight is one tensor again; a Sequential's child is one table
        assert.are.equal(got.emb.weight, got.head.weight)
        for i, child in ipairs(got.body:children()) do
            assert.are.equal(got.body[i], child)
        end
        -- parameters are parameters that require grad; buffers are not
        local ps = got:parameters()
        assert.are.equal(#m:parameters(), #ps)
        for _, p in ipairs(ps) do
            assert.is_true(p.requires_grad)
        end
        assert.is_false(got.norm.running_mean.requires_grad)
        same_values(m.norm.running_mean, got.norm.running_mean)
        local want_sd, got_sd = m:state_dict(), got:state_dict()
        local n = 0
        for k, v in pairs(want_sd) do
            same_values(v, got_sd[k])
            n = n + 1
        end
        assert.are.equal(11, n) -- emb 1, body 4, norm 5, head 1
        -- the loaded model trains: its parameters get gradients and move
        got:train()
        local opt = tide.optim.SGD(got:parameters(), { lr = 0.1 })
        local before = got.body[1].weight:clone()
        F.cross_entropy(got(ids), tide.tensor({ 2, 3, 4, 5, 6 })):backward()
        opt:step()
        assert.is_true((got.body[1].weight - before):abs():max():item() > 0)
        same_values(before, m.body[1].weight) -- the saved model is its own
    end)

    it("in a checkpoint table; tide's functions by name; frozen parameters stay frozen", function()
        tide.manual_seed(2)
        local layer = nn.TransformerEncoderLayer(8, 2, 16, { dropout = 0 })
        layer.linear1.weight:requires_grad_(false)
        layer.gate = nn.Parameter(tide.ones(2), false) -- a frozen nn.Parameter
        local x = tide.randn(3, 2, 8)
        local want = layer(x)
        local path = tmp()
        tide.save({ model = layer, epoch = 3 }, path)
        local ck = tide.load(path)
        os.remove(path)
        assert.are.equal(3, ck.epoch)
        assert.are.equal(F.relu, ck.model.activation)
        same_values(want, ck.model(x))
        assert.is_false(ck.model.linear1.weight.requires_grad)
        -- an nn.Parameter is one again: assigned to a module, it registers though frozen
        assert.is_false(ck.model.gate.requires_grad)
        local host = nn.Module()
        host.w = ck.model.gate
        assert.are.equal(1, #host:parameters())
        -- a module's registered weight is a parameter too (PyTorch's are nn.Parameters), frozen
        host.v = ck.model.linear1.weight
        assert.are.equal(2, #host:parameters())
        assert.is_true(tide.isinstance(host.v, nn.Parameter))
        assert.is_true(ck.model.linear2.weight.requires_grad)
    end)

    it("restores the device each tensor was saved from, or map_location's", function()
        local m = nn.Linear(3, 2):to("cpu:1")
        local path = tmp()
        tide.save(m, path)
        local back = tide.load(path)
        assert.are.equal("cpu:1", tostring(back.weight.device))
        local here = tide.load(path, "cpu")
        os.remove(path)
        assert.are.equal("cpu", tostring(here.weight.device))
        assert.is_true(here.weight.requires_grad)
        assert.are.equal(2, #here:parameters())
        same_values(m.weight:cpu(), here.weight)
    end)

    it("refuses code and classes it cannot name, at save and at load", function()
        local path = tmp()
        local function fails(msg, f)
            local ok, err = pcall(f)
            assert.is_false(ok)
            assert.matches(msg, err, 1, true)
        end
        local m = nn.Linear(2, 2)
        m.act = function(x) return x end
        fails("tide: save: " .. path .. ": act is a function that is not one of tide's (a " ..
            "closure, a hook, your own); a checkpoint holds no code, as PyTorch's pickle holds " ..
            "no lambda: remove it, or save the state_dict() and build the model in code",
            function() tide.save(m, path) end)
        local hooked = nn.Linear(2, 2)
        hooked:register_forward_hook(function() end)
        fails("tide: save: " .. path .. ": _forward_hooks.1 is a function that is not one of " ..
            "tide's", function() tide.save(hooked, path) end)
        local Anonymous = nn.Module:extend()
        fails("tide: save: " .. path .. ": net is a Module module whose class tide.load " ..
            "cannot find by its name; make the class with nn.Module:extend(\"Name\"), or save " ..
            "its state_dict()", function() tide.save({ net = Anonymous() }, path) end)
        fails("tide: save: " .. path .. ": opt is a SGD object; save its state_dict() instead",
            function() tide.save({ opt = tide.optim.SGD(m:parameters(), { lr = 1 }) }, path) end)
        assert.is_nil(io.open(path, "rb"))
        -- a class this Lua state has not defined (saved by another script)
        local Gone = nn.Module:extend("SaveModuleGone")
        function Gone:init()
            nn.Module.init(self)
            self.fc = nn.Linear(1, 1)
        end
        tide.save(Gone(), path)
        Gone = nil -- luacheck: ignore
        collectgarbage()
        collectgarbage()
        fails("tide: load: " .. path .. ": the file holds a module of class SaveModuleGone, " ..
            "which this Lua state has not defined; define it first (SaveModuleGone = " ..
            "nn.Module:extend(\"SaveModuleGone\") and its methods, as Python imports a pickled " ..
            "model's class), or load a state_dict into a model built in code",
            function() tide.load(path) end)
        os.remove(path)
    end)
end)

describe("tide.save(model) across tide.nn's layers", function()
    it("each comes back of its class with the same output and state_dict", function()
        tide.manual_seed(3)
        local cases = {
            { nn.Conv2d(2, 3, 3, { padding = 1 }), { 1, 2, 5, 5 } },
            { nn.Sequential(nn.Conv2d(2, 2, 3), nn.BatchNorm2d(2), nn.MaxPool2d(2)), { 2, 2, 6, 6 } },
            { nn.LSTM(3, 4, 2), { 5, 2, 3 } },
            { nn.GRU(3, 4, { batch_first = true, bidirectional = true }), { 2, 5, 3 } },
            { nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, { dropout = 0 }), 2),
                { 4, 2, 8 } },
            { nn.LayerNorm(6), { 3, 6 } },
            { nn.MultiheadAttention(8, 2), { 3, 2, 8 }, true },
            { nn.EmbeddingBag(5, 2), { 2, 3 }, "ids" },
        }
        for i, c in ipairs(cases) do
            local m, x = c[1]:eval(), tide.randn(c[2])
            if c[3] == "ids" then
                x = tide.randint(1, 6, c[2])
            end
            local function run(model)
                if c[3] == true then
                    return model(x, x, x)
                end
                return model(x)
            end
            local want = run(m)
            want = type(want) == "table" and want[1] or want
            local path = tmp()
            tide.save(m, path)
            local got = tide.load(path)
            os.remove(path)
            assert.are.equal(getmetatable(m), getmetatable(got), "case " .. i)
            local y = run(got)
            same_values(want, type(y) == "table" and y[1] or y)
            local n = 0
            for k, v in pairs(m:state_dict()) do
                same_values(v, got:state_dict()[k])
                n = n + 1
            end
            assert.is_true(n > 0)
        end
        local lists = nn.ModuleDict({ a = nn.Linear(2, 2), b = nn.ModuleList({ nn.ReLU() }) })
        lists.p = nn.ParameterList({ tide.ones(2) })
        local path = tmp()
        tide.save(lists, path)
        local got = tide.load(path)
        os.remove(path)
        assert.are.equal(nn.ModuleDict, getmetatable(got))
        assert.are.equal(nn.ReLU, getmetatable(got.b[1]))
        assert.are.same({ 1, 1 }, got.p[1]:tolist())
        assert.are.equal(3, #got:parameters()) -- a.weight, a.bias, p.1
    end)

    it("refuses what PyTorch's pickle refuses or tide cannot name: parametrizations", function()
        local path = tmp()
        local ok, err = pcall(tide.save, { net = nn.utils.weight_norm(nn.Linear(4, 3)) }, path)
        assert.is_false(ok)
        assert.matches("tide: save: " .. path .. ": net has a weight_norm or spectral_norm on " ..
            "'weight', whose code a checkpoint cannot hold; remove it first " ..
            "(nn.utils.remove_weight_norm) or save the state_dict()", err, 1, true)
        local par = nn.Linear(3, 3)
        local Sym = nn.Module:extend("SaveModuleSym")
        function Sym:forward(w)
            return w:triu() + w:triu(1):t()
        end
        nn.utils.parametrize.register_parametrization(par, "weight", Sym())
        ok, err = pcall(tide.save, par, path)
        assert.is_false(ok)
        assert.matches("tide: save: " .. path .. ": the checkpoint is a parametrized module " ..
            "(ParametrizedLinear); as PyTorch's, it saves through its state_dict() only", err, 1,
            true)
        assert.is_nil(io.open(path, "rb"))
    end)
end)
