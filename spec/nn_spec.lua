-- tide.nn: Module mechanics, layers against hand-computed values, device moves, learning.
-- The last block runs on the device under test (spec/support/device.lua): run_all.sh runs this
-- file again on cpu:1, gpu-check on cuda:0.
local tide = require("tide")
local nn = require("tide.nn")
local autograd = require("tide.autograd")
local gradcheck = require("spec.support.gradcheck")
local D = require("spec.support.device")

local function flat(x, out)
    out = out or {}
    if type(x) == "table" then
        for _, v in ipairs(x) do
            flat(v, out)
        end
    else
        out[#out + 1] = x
    end
    return out
end

local function close(t, expected, tol)
    local got = t:cpu():reshape(-1):totable()
    local want = flat(expected)
    assert.are.equal(#want, #got)
    for i = 1, #want do
        if math.abs(got[i] - want[i]) > (tol or 1e-4) then
            error(string.format("element %d: got %.7g, expected %.7g", i, got[i], want[i]), 2)
        end
    end
end

-- fill_ + add_ rather than copy_: see assign_ in lua/tide/nn/Module.lua
local function set(p, values)
    autograd.no_grad(function()
        p:fill_(0):add_(tide.tensor(values, { dtype = p.dtype }))
    end)
end

local function R(...)
    return tide.randn({ ... }, { dtype = "float64", requires_grad = true })
end

local Net = nn.Module:extend("Net")
function Net:init(hidden)
    self.fc1 = nn.Linear(784, hidden or 128)
    self.act = nn.ReLU()
    self.fc2 = nn.Linear(hidden or 128, 10)
end
function Net:forward(x)
    return self.fc2(self.act(self.fc1(x)))
end

describe("nn.Module", function()
    before_each(function()
        tide.manual_seed(1)
    end)
    after_each(function()
        collectgarbage()
    end)

    it("extend() makes callable, printable subclasses", function()
        local m = Net(16)
        assert.are.equal("Net", m.__name)
        local y = m(tide.randn(2, 784))
        assert.are.same({ 2, 10 }, y.shape)
        assert.matches("Net", tostring(m))
        local Sub = Net:extend("Sub")
        local s = Sub(8)
        assert.are.same({ 3, 10 }, s(tide.randn(3, 784)).shape)
        assert.matches("^Sub", tostring(s))
    end)

    it("registers parameters, buffers and children in assignment order #lua53", function()
        local m = Net(16)
        local names = {}
        for i, np in ipairs(m:named_parameters()) do
            names[i] = np[1]
        end
        assert.are.same({ "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias" }, names)
        -- the same order through pairs() and as an iterator, and lookup by name
        local seen = {}
        for name, p in pairs(m:named_parameters()) do
            seen[#seen + 1] = name
            assert.is_true(autograd.is_tensor(p))
        end
        assert.are.same(names, seen)
        seen = {}
        for name in m:named_parameters() do
            seen[#seen + 1] = name
        end
        assert.are.same(names, seen)
        assert.is_true(rawequal(m.fc2.bias, m:named_parameters()["fc2.bias"]))
        assert.are.equal(4, #m:parameters())
        assert.is_true(rawequal(m.fc1.weight, m:parameters()[1]))
        assert.are.equal(3, #m:children())
        local M = nn.Module:extend("M")
        function M:init()
            self.z = tide.zeros(2):requires_grad_(true)
            self.a = tide.ones(3):requires_grad_(true)
            self:register_buffer("stats", tide.zeros(4))
            self.plain = tide.zeros(1) -- no grad, not registered
        end
        local keys = {}
        local sd = M():state_dict()
        for k in pairs(sd) do
            keys[#keys + 1] = k
        end
        assert.are.same({ "z", "a", "stats" }, keys)
        sd.a, sd.extra = nil, tide.zeros(1) -- edits show in the iteration
        keys = {}
        for k in sd do
            keys[#keys + 1] = k
        end
        assert.are.same({ "z", "stats", "extra" }, keys)
    end)

    it("names nested parameters by path and lists a shared parameter once", function()
        local Block = nn.Module:extend("Block")
        function Block:init()
            self.inner = nn.Sequential(nn.Linear(2, 2))
            self.head = nn.Linear(2, 1)
            self.tied = self.head -- the same module twice
        end
        local names = {}
        for i, np in ipairs(Block():named_parameters()) do
            names[i] = np[1]
        end
        assert.are.same({ "inner.1.weight", "inner.1.bias", "head.weight", "head.bias" }, names)
    end)

    it("prints a tree with parameter counts", function()
        local s = tostring(Net(16))
        assert.matches("^Net  %[12730 parameters%]", s)
        assert.matches("\n  fc1: Linear%(in_features=784, out_features=16, bias=true%)  " ..
            "%[12560 parameters%]", s)
        assert.matches("\n  act: ReLU  %[0 parameters%]", s)
        assert.matches("\n  fc2: Linear%(in_features=16, out_features=10, bias=true%)  " ..
            "%[170 parameters%]", s)
    end)

    it("train() and eval() reach every child", function()
        local m = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))
        assert.are.equal(m, m:eval())
        assert.is_false(m.training)
        assert.is_false(m[2].training)
        m:train()
        assert.is_true(m[2].training)
        -- each child's own train(mode) runs, as PyTorch's recursion: an override (loralib's
        -- merge on eval) is called from its parent's eval(), with the mode
        local Merging = nn.Linear:extend("Merging")
        local seen = {}
        function Merging:train(mode)
            seen[#seen + 1] = mode
            return nn.Module.train(self, mode)
        end
        local inner = Merging(2, 2)
        local outer = nn.Sequential(nn.Sequential(inner), nn.ReLU())
        outer:eval()
        outer:train()
        assert.are.same({ false, true }, seen)
        assert.is_true(inner.training)
    end)

    it("zero_grad clears gradients", function()
        local m = nn.Linear(3, 2)
        m(tide.randn(4, 3)):sum():backward()
        assert.is_not_nil(m.weight.grad)
        m:zero_grad()
        assert.is_nil(m.weight.grad)
    end)

    describe("to(dev)", function()
        it("moves parameters, gradients and buffers in place and returns the model", function()
            local m = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
            local w = m[1].weight
            m(tide.randn(4, 3)):sum():backward()
            local g = w.grad
            local before = w:cpu():totable()
            assert.are.equal(m, m:to("cpu:1"))
            assert.is_true(rawequal(w, m[1].weight))
            assert.is_true(rawequal(w, m:parameters()[1]))
            assert.are.equal("cpu:1", tostring(w.device))
            assert.are.equal("cpu:1", tostring(w.grad.device))
            assert.is_true(rawequal(g, w.grad))
            assert.are.equal("cpu:1", tostring(m[2].running_mean.device))
            assert.are.same(before, w:cpu():totable())
            assert.is_true(w.requires_grad)
        end)

        it("SimpleNet: output on cpu:1; a cpu:0 input raises the device error", function()
            local model = Net():to("cpu:1")
            local x = tide.randn({ 64, 784 }, { device = "cpu:1" })
            local y = model(x)
            assert.are.equal("cpu:1", tostring(y.device))
            assert.are.same({ 64, 10 }, y.shape)
            local ok, err = pcall(model, tide.randn(64, 784))
            assert.is_false(ok)
            assert.matches("same device", err)
            assert.matches("cpu:1", err)
            assert.matches("cpu", err:gsub("cpu:1", ""))
        end)

        it("accepts a device object and keeps float64 with to(dev, dtype)", function()
            local m = nn.Linear(2, 2)
            m:to(tide.device("cpu:1"), "float64")
            assert.are.equal("cpu:1", tostring(m.weight.device))
            assert.are.equal("float64", m.bias.dtype)
            local ok, err = pcall(m.to, m, "int64")
            assert.is_false(ok)
            assert.matches("expected a floating-point dtype, got int64", err, 1, true)
            -- PyTorch's module.to(tensor): that tensor's device and dtype
            local like = tide.zeros({ 1 }, { dtype = tide.float32 })
            assert.are.equal(m, m:to(like))
            assert.are.equal("cpu", tostring(m.weight.device))
            assert.are.equal("float32", m.bias.dtype)
            ok, err = pcall(m.to, m, tide.zeros({ 1 }, { dtype = tide.int64 }))
            assert.is_false(ok)
            assert.matches("expected a floating-point dtype, got int64", err, 1, true)
            assert.are.equal("float32", m.bias.dtype)
        end)

        it("a device that does not exist raises at the caller and moves nothing", function()
            local m = nn.Linear(2, 2)
            local ok, err = pcall(function()
                m:to("cpu:7")
                return m
            end)
            assert.is_false(ok)
            assert.matches("nn_spec%.lua:%d+: tide: device: cpu:7", err)
            assert.are.equal("cpu", tostring(m.weight.device))
        end)

        it("casts floating-point parameters with to(dtype)", function()
            local m = nn.BatchNorm1d(2)
            local w = m.weight
            m:to("float64")
            assert.is_true(rawequal(w, m.weight))
            assert.are.equal("float64", w.dtype)
            assert.are.equal("float64", m.running_var.dtype)
            assert.are.equal("int64", m.num_batches_tracked.dtype)
        end)
    end)

    describe("state_dict", function()
        it("round-trips into another model", function()
            local a, b = Net(8), Net(8)
            b:load_state_dict(a:state_dict())
            local x = tide.randn(2, 784)
            close(b(x), a(x):totable(), 1e-6)
        end)

        it("loads across devices", function()
            local a, b = Net(8), Net(8):to("cpu:1")
            b:load_state_dict(a:state_dict())
            assert.are.equal("cpu:1", tostring(b.fc1.weight.device))
            close(b.fc2.bias, a.fc2.bias:totable(), 0)
        end)

        it("round-trips through tide.save / tide.load", function()
            local a, b = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)),
                nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
            a(tide.randn(4, 3)) -- moves the running statistics
            local path = os.tmpname()
            tide.save(path, a:state_dict())
            b:load_state_dict(tide.load(path))
            os.remove(path)
            close(b[1].weight, a[1].weight:totable(), 0)
            close(b[2].running_mean, a[2].running_mean:totable(), 0)
            assert.are.equal(1, b[2].num_batches_tracked:item())
        end)

        it("loads across dtypes", function()
            local a, b = Net(8):to("float64"), Net(8)
            b:load_state_dict(a:state_dict())
            assert.are.equal("float32", b.fc1.weight.dtype)
            close(b.fc2.bias, a.fc2.bias:totable(), 1e-6)
        end)

        it("names missing and unexpected keys", function()
            local m = Net(8)
            local sd = m:state_dict()
            sd["fc1.bias"] = nil
            sd["fc3.weight"] = tide.zeros(1)
            local ok, err = pcall(m.load_state_dict, m, sd)
            assert.is_false(ok)
            assert.matches("tide: load_state_dict: missing keys: fc1.bias; unexpected keys: " ..
                "fc3.weight", err, 1, true)
            local before = m.fc1.weight:totable()
            sd["fc1.bias"] = tide.ones(8)
            assert.is_false(pcall(m.load_state_dict, m, sd)) -- still the unexpected key
            assert.are.same(before, m.fc1.weight:totable())
            m:load_state_dict(sd, false)
            close(m.fc1.bias, { 1, 1, 1, 1, 1, 1, 1, 1 })
            -- the options table says the same (from_pretrained's spelling); other values raise
            sd["fc1.bias"] = tide.full({ 8 }, 2)
            local r = m:load_state_dict(sd, { strict = false })
            close(m.fc1.bias, { 2, 2, 2, 2, 2, 2, 2, 2 })
            assert.are.same({ "fc3.weight" }, r.unexpected_keys)
            assert.is_false(pcall(m.load_state_dict, m, sd, { strict = true }))
            ok, err = pcall(m.load_state_dict, m, sd, { strickt = false })
            assert.matches("tide: load_state_dict: unknown option", err, 1, true)
            ok, err = pcall(m.load_state_dict, m, sd, "no")
            assert.matches("tide: load_state_dict: strict must be a boolean or {strict = false}, " ..
                "got string", err, 1, true)
        end)

        it("reports shape mismatches and changes nothing", function()
            local m = Net(8)
            local sd = Net(16):state_dict()
            local before = m.fc2.bias:totable()
            local ok, err = pcall(m.load_state_dict, m, sd)
            assert.is_false(ok)
            assert.matches("size mismatch for 'fc1.weight': the model has {8, 784}, the state " ..
                "dict has {16, 784}", err, 1, true)
            assert.are.same(before, m.fc2.bias:totable())
        end)
    end)
end)

describe("nn layers", function()
    before_each(function()
        tide.manual_seed(2)
    end)

    it("Linear: y = x W^T + b and PyTorch's init bounds", function()
        local l = nn.Linear(100, 3)
        local bound = 1 / math.sqrt(100)
        assert.is_true(l.weight:abs():max():item() <= bound)
        assert.is_true(l.weight:abs():max():item() > 0.8 * bound)
        assert.is_true(l.bias:abs():max():item() <= bound)
        local m = nn.Linear(2, 3)
        set(m.weight, { { 1, 2 }, { 3, 4 }, { 5, 6 } })
        set(m.bias, { 0.5, -0.5, 1 })
        close(m(tide.tensor({ { 1.0, 1.0 }, { 2.0, -1.0 } }, { dtype = "float32" })),
            { { 3.5, 6.5, 12 }, { 0.5, 1.5, 5 } })
        assert.is_nil(nn.Linear(2, 3, false).bias)
    end)

    it("Linear: the shape error names both sizes", function()
        local ok, err = pcall(function()
            return Net()(tide.randn(2, 100))
        end)
        assert.is_false(ok)
        assert.matches("tide: Linear: expected input with last dim 784, got 100", err, 1, true)
        assert.matches("^[^\n]*nn_spec%.lua:%d+: tide: Linear", err) -- the model's line first
    end)

    it("constructor errors point at the caller", function()
        local ok, err = pcall(function()
            local m = nn.Linear(0, 3) -- not a tail call: this line is the caller
            return m
        end)
        assert.is_false(ok)
        assert.matches("nn_spec%.lua:%d+: tide: Linear: expected in_features to be an integer " ..
            ">= 1, got 0", err)
        ok, err = pcall(function()
            local m = nn.MSELoss({ reduction = "avg" })
            return m
        end)
        assert.matches("nn_spec%.lua:%d+: tide: MSELoss: unknown reduction 'avg'", err)
    end)

    it("Conv2d: sums of windows, with stride and padding", function()
        local c = nn.Conv2d(1, 1, 2)
        set(c.weight, { { { { 1, 1 }, { 1, 1 } } } })
        set(c.bias, { 0.5 })
        local x = tide.arange(1, 10, { dtype = "float32" }):view(1, 1, 3, 3)
        close(c(x), { 12.5, 16.5, 24.5, 28.5 })
        local c2 = nn.Conv2d(1, 1, 2, { stride = 2, padding = 1, bias = false })
        set(c2.weight, { { { { 1, 1 }, { 1, 1 } } } })
        local y = c2(x)
        assert.are.same({ 1, 1, 2, 2 }, y.shape)
        close(y, { 1, 5, 11, 28 })
        local bound = 1 / math.sqrt(3 * 3 * 3)
        assert.is_true(nn.Conv2d(3, 4, 3).weight:abs():max():item() <= bound)
        local ok, err = pcall(c, tide.randn(1, 2, 3, 3))
        assert.is_false(ok)
        assert.matches("tide: Conv2d: expected input with 1 channels (dim 2), got 2", err, 1, true)
    end)

    it("MaxPool2d and Flatten", function()
        local x = tide.tensor({ { { { 1.0, 2.0, 5.0, 0.0 }, { 3.0, 4.0, 1.0, 1.0 },
            { 0.0, 0.0, 9.0, 8.0 }, { -1.0, 7.0, 6.0, 2.0 } } } }, { dtype = "float32" })
        local y = nn.MaxPool2d(2)(x)
        close(y, { 4, 5, 7, 9 })
        assert.are.same({ 1, 4 }, nn.Flatten()(y).shape)
        assert.are.same({ 2, 12 }, nn.Flatten()(tide.zeros(2, 3, 4)).shape)
    end)

    it("activations", function()
        local x = tide.tensor({ -1.0, 0.0, 1.0 })
        close(nn.ReLU()(x), { 0, 0, 1 })
        close(nn.Sigmoid()(x), { 0.26894142, 0.5, 0.73105858 })
        close(nn.Tanh()(x), { -0.76159416, 0, 0.76159416 })
        close(nn.GELU()(x), { -0.15865525, 0, 0.84134475 })
        close(nn.Softmax(1)(x), { 0.09003057, 0.24472847, 0.66524096 })
        close(nn.LogSoftmax()(x), { -2.40760596, -1.40760596, -0.40760596 })
    end)

    it("Dropout: scales kept values in training, identity in eval", function()
        local d = nn.Dropout(0.5)
        local y = d(tide.ones(1000)):totable()
        local zeros = 0
        for _, v in ipairs(y) do
            assert.is_true(v == 0 or math.abs(v - 2) < 1e-6)
            zeros = zeros + (v == 0 and 1 or 0)
        end
        assert.is_true(zeros > 400 and zeros < 600)
        d:eval()
        local x = tide.ones(5)
        assert.is_true(rawequal(x, d(x)))
    end)

    it("Sequential chains its children, named 1..n", function()
        local s = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
        set(s[1].weight, { { 1, 0 }, { 0, -1 } })
        set(s[1].bias, { 0, 0 })
        close(s(tide.tensor({ { 3.0, 4.0 } }, { dtype = "float32" })), { 3, 0 })
        assert.are.equal(2, #s)
        assert.are.equal("1.weight", s:named_parameters()[1][1])
    end)

    it("Embedding looks up 1-based ids and accumulates repeated rows", function()
        local e = nn.Embedding(4, 2)
        set(e.weight, { { 1, 2 }, { 3, 4 }, { 5, 6 }, { 7, 8 } })
        local y = e(tide.tensor({ { 1, 4 }, { 4, 2 } }))
        assert.are.same({ 2, 2, 2 }, y.shape)
        close(y, { 1, 2, 7, 8, 7, 8, 3, 4 })
        y:sum():backward()
        close(e.weight.grad, { { 1, 1 }, { 1, 1 }, { 0, 0 }, { 2, 2 } })
        local ok, err = pcall(e, tide.tensor({ 0, 1 }))
        assert.is_false(ok)
        assert.matches("tide: Embedding: id 0 out of range for 4 embeddings", err, 1, true)
    end)

    it("LayerNorm normalizes the last dim", function()
        local ln = nn.LayerNorm(3)
        local s = math.sqrt(2 / 3 + 1e-5)
        close(ln(tide.tensor({ { 1.0, 2.0, 3.0 }, { 2.0, 2.0, 2.0 } }, { dtype = "float32" })),
            { -1 / s, 0, 1 / s, 0, 0, 0 })
        local ok, err = pcall(ln, tide.zeros(2, 4))
        assert.is_false(ok)
        assert.matches("tide: LayerNorm: expected input ending in {3}, got {2, 4}", err, 1, true)
    end)

    it("BatchNorm1d: batch statistics, running estimates, eval mode", function()
        local bn = nn.BatchNorm1d(2)
        local x = tide.tensor({ { 1.0, 10.0 }, { 3.0, 10.0 } }, { dtype = "float32" })
        local s = math.sqrt(1 + 1e-5)
        close(bn(x), { -1 / s, 0, 1 / s, 0 })
        close(bn.running_mean, { 0.2, 1.0 })
        close(bn.running_var, { 0.9 + 0.1 * 2, 0.9 })
        assert.are.equal(1, bn.num_batches_tracked:item())
        bn:eval()
        close(bn(tide.tensor({ { 0.2, 1.0 } })), { 0, 0 })
        local ok, err = pcall(bn, tide.zeros(2, 3))
        assert.is_false(ok)
        assert.matches("expected input with 2 channels (dim 2), got 3", err, 1, true)
    end)

    it("BatchNorm2d normalizes each channel over N, H, W", function()
        local bn = nn.BatchNorm2d(2)
        local x = tide.randn(4, 2, 3, 3):mul(3):add(1)
        local y = bn(x)
        local m = y:mean(1, true):mean(3, true):mean(4, true)
        close(m, { 0, 0 }, 1e-5)
        local v = y:mul(y):mean(1, true):mean(3, true):mean(4, true)
        close(v, { 1, 1 }, 1e-3)
    end)

    describe("gradcheck of each layer (float64)", function()
        local function check(layer, x, ...)
            layer:to("float64")
            local inputs = { x }
            for _, p in ipairs(layer:parameters()) do
                inputs[#inputs + 1] = p
            end
            local extra = { ... }
            assert.is_true(gradcheck(function(a)
                return layer(a, table.unpack(extra))
            end, inputs))
        end
        it("Linear", function() check(nn.Linear(3, 2), R(4, 3)) end)
        it("Conv2d", function() check(nn.Conv2d(2, 3, 2, { padding = 1, stride = 2 }), R(2, 2, 3, 3)) end)
        it("Conv2d without bias, 3x2 kernel", function()
            check(nn.Conv2d(1, 2, { 3, 2 }, { bias = false }), R(2, 1, 4, 3))
        end)
        it("MaxPool2d", function() check(nn.MaxPool2d(2), R(1, 2, 4, 4)) end)
        it("LayerNorm", function() check(nn.LayerNorm(4), R(3, 4)) end)
        it("BatchNorm1d", function() check(nn.BatchNorm1d(3), R(5, 3)) end)
        it("BatchNorm2d", function() check(nn.BatchNorm2d(2), R(3, 2, 2, 2)) end)
        it("GELU", function() check(nn.GELU(), R(6)) end)
        it("ReLU, Sigmoid, Tanh", function()
            check(nn.ReLU(), R(6))
            check(nn.Sigmoid(), R(6))
            check(nn.Tanh(), R(6))
        end)
        it("Softmax and LogSoftmax", function()
            check(nn.Softmax(2), R(2, 4))
            check(nn.LogSoftmax(1), R(3, 2))
        end)
        it("Sequential with Flatten", function()
            check(nn.Sequential(nn.Flatten(), nn.Linear(6, 2), nn.Tanh()), R(2, 2, 3))
        end)
        it("Dropout (a fixed mask: the same seed for every evaluation)", function()
            local d = nn.Dropout(0.3)
            assert.is_true(gradcheck(function(a)
                tide.manual_seed(11)
                return d(a)
            end, { R(20) }))
        end)
        it("Embedding", function()
            local e = nn.Embedding(5, 3):to("float64")
            assert.is_true(gradcheck(function(w)
                return e(tide.tensor({ 2, 5, 2 }))
            end, { e.weight }))
        end)
        it("CrossEntropyLoss", function()
            check(nn.CrossEntropyLoss(), R(4, 3), tide.tensor({ 1, 3, 2, 3 }))
        end)
        it("CrossEntropyLoss sum and none", function()
            check(nn.CrossEntropyLoss({ reduction = "sum" }), R(4, 3), tide.tensor({ 1, 3, 2, 3 }))
            check(nn.CrossEntropyLoss({ reduction = "none" }), R(2, 3), tide.tensor({ 2, 1 }))
        end)
        it("Linear on 1-D and 3-D inputs", function()
            check(nn.Linear(3, 2), R(3))
            check(nn.Linear(3, 2), R(2, 2, 3))
        end)
        it("NLLLoss", function() check(nn.NLLLoss(), R(4, 3), tide.tensor({ 1, 3, 2, 3 })) end)
        it("MSELoss", function() check(nn.MSELoss(), R(4, 3), tide.randn(4, 3, { dtype = "float64" })) end)
        it("BCEWithLogitsLoss", function()
            check(nn.BCEWithLogitsLoss(), R(5), tide.tensor({ 0.0, 1.0, 1.0, 0.0, 0.5 },
                { dtype = "float64" }))
        end)
    end)
end)

describe("nn losses", function()
    it("MSELoss", function()
        local l = nn.MSELoss()(tide.tensor({ 1.0, 2.0, 3.0 }), tide.tensor({ 1.0, 0.0, 0.0 }))
        close(l, { 13 / 3 })
        close(nn.MSELoss({ reduction = "sum" })(tide.tensor({ 1.0 }), tide.tensor({ 3.0 })), { 4 })
    end)

    it("CrossEntropyLoss with 1-based targets", function()
        local ce = nn.CrossEntropyLoss()
        close(ce(tide.tensor({ { 0.0, 0.0 } }), tide.tensor({ 1 })), { math.log(2) })
        close(ce(tide.tensor({ { 1.0, 2.0, 3.0 }, { 1.0, 2.0, 3.0 } }), tide.tensor({ 3, 1 })),
            { (0.40760596 + 2.40760596) / 2 })
        close(nn.CrossEntropyLoss({ reduction = "none" })(tide.tensor({ { 1.0, 2.0, 3.0 } }),
            tide.tensor({ 2 })), { 1.40760596 })
        -- stable for large logits (fused log-softmax)
        close(ce(tide.tensor({ { 1000.0, 0.0 } }), tide.tensor({ 2 })), { 1000 })
    end)

    it("CrossEntropyLoss: clear errors for bad targets #lua53", function()
        local ce = nn.CrossEntropyLoss()
        local x = tide.zeros(2, 3)
        local ok, err = pcall(ce, x, tide.tensor({ 1, 4 }))
        assert.is_false(ok)
        assert.matches("tide: CrossEntropyLoss: target 4 out of range for 3 classes", err, 1, true)
        ok, err = pcall(ce, x, tide.tensor({ 0, 1 }))
        assert.matches("target 0 out of range", err, 1, true)
        ok, err = pcall(ce, x, tide.tensor({ 1.0, 2.0 }))
        assert.matches("expected integer class targets (int64, 1-based), got float32", err, 1, true)
        ok, err = pcall(ce, x, tide.tensor({ 1, 2, 3 }))
        assert.matches("expected target of shape {2} for input {2, 3}, got {3}", err, 1, true)
    end)

    it("off the host: no transfer per step, a NaN loss for a bad target", function()
        local ce = nn.CrossEntropyLoss()
        local x = tide.zeros({ 2, 3 }, { device = "cpu:1" })
        tide.reset_transfer_stats()
        local l = ce(x, tide.tensor({ 1, 3 }, { device = "cpu:1" }))
        local st = tide.transfer_stats()
        assert.are.equal(0, st.d2h_count + st.h2d_count + st.d2d_count)
        close(l, { math.log(3) })
        local bad = ce(x, tide.tensor({ 1, 4 }, { device = "cpu:1" })):item()
        assert.is_true(bad ~= bad or bad == -math.huge or bad == math.huge)
    end)

    it("NLLLoss and BCEWithLogitsLoss", function()
        close(nn.NLLLoss()(tide.tensor({ { -1.0, -2.0 }, { -3.0, -4.0 } }), tide.tensor({ 2, 1 })),
            { 2.5 })
        close(nn.BCEWithLogitsLoss()(tide.tensor({ 0.0, 2.0 }), tide.tensor({ 1.0, 0.0 })),
            { (math.log(2) + math.log(1 + math.exp(2))) / 2 })
        close(nn.BCEWithLogitsLoss()(tide.tensor({ -200.0 }), tide.tensor({ 0.0 })), { 0 })
    end)
end)

describe("learning", function()
    it("an XOR net learns", function()
        tide.manual_seed(3)
        local model = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))
        local x = tide.tensor({ { 0.0, 0.0 }, { 0.0, 1.0 }, { 1.0, 0.0 }, { 1.0, 1.0 } },
            { dtype = "float32" })
        local y = tide.tensor({ { 0.0 }, { 1.0 }, { 1.0 }, { 0.0 } })
        local opt = tide.optim.Adam(model:parameters(), { lr = 0.05 })
        local lossf = nn.BCEWithLogitsLoss()
        local loss
        for _ = 1, 300 do
            opt:zero_grad()
            loss = lossf(model(x), y)
            loss:backward()
            opt:step()
        end
        assert.is_true(loss:item() < 0.02, "final loss " .. loss:item())
        local p = model(x):sigmoid():totable()
        assert.is_true(p[1][1] < 0.1 and p[2][1] > 0.9 and p[3][1] > 0.9 and p[4][1] < 0.1)
    end)

    it("a training step on cpu:1 makes no transfer, even under transfer_guard(\"disallow\")",
        function()
            local model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(),
                nn.Dropout(0.1), nn.Linear(8, 3)):to("cpu:1")
            local x = tide.randn({ 6, 4 }, { device = "cpu:1" })
            local y = tide.tensor({ 1, 2, 3, 1, 2, 3 }, { device = "cpu:1" })
            local opt = tide.optim.Adam(model:parameters(), { lr = 0.01 })
            tide.reset_transfer_stats()
            tide.transfer_guard("disallow")
            local ok, err = pcall(function()
                for _ = 1, 2 do
                    opt:zero_grad()
                    nn.CrossEntropyLoss()(model(x), y):backward()
                    opt:step()
                end
            end)
            tide.transfer_guard("allow")
            assert.is_true(ok, err)
            local st = tide.transfer_stats()
            assert.are.equal(0, st.d2h_count + st.h2d_count + st.d2d_count)
        end)

    it("a linear regression recovers y = 3x + 2 on cpu:1", function()
        tide.manual_seed(4)
        local model = nn.Linear(1, 1):to("cpu:1")
        local x = tide.rand({ 64, 1 }, { device = "cpu:1" }):mul(2):sub(1)
        local y = x * 3 + 2
        local opt = tide.optim.SGD(model:parameters(), { lr = 0.1, momentum = 0.9 })
        local loss
        for _ = 1, 200 do
            opt:zero_grad()
            loss = nn.MSELoss()(model(x), y)
            loss:backward()
            opt:step()
        end
        assert.is_true(loss:item() < 1e-6, "final loss " .. loss:item())
        close(model.weight, { 3 }, 1e-3)
        close(model.bias, { 2 }, 1e-3)
        assert.are.equal("cpu:1", tostring(model.weight.device))
    end)
end)

describe("nn on the device under test (" .. D.name .. ")", function()
    before_each(function()
        tide.manual_seed(6)
    end)

    it("SimpleNet: moved there, fed there, output there; other inputs raise", function()
        local model = Net():to(D.name)
        local y = model(tide.randn({ 8, 784 }, { device = D.name }))
        assert.are.equal(D.name == "cpu" and "cpu" or D.name, tostring(y.device))
        local ok, err = pcall(model, tide.randn({ 8, 784 }, { device = D.other }))
        assert.is_false(ok)
        assert.matches("same device", err, 1, true)
        local dn = tostring(tide.device(D.name))
        local on = tostring(tide.device(D.other))
        assert.matches(dn, err, 1, true)
        assert.matches(on, err, 1, true)
    end)

    it("a CNN trains there: gradients and optimizer state stay on the device", function()
        local dev = tide.device(D.name)
        local model = nn.Sequential(nn.Conv2d(1, 4, 3, { padding = 1 }), nn.ReLU(),
            nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 4 * 4, 3)):to(dev)
        local x = tide.randn({ 5, 1, 8, 8 }, { device = dev })
        local y = tide.tensor({ 1, 2, 3, 1, 2 }, { device = dev })
        local opt = tide.optim.SGD(model:parameters(), { lr = 0.05, momentum = 0.9 })
        local lossf = nn.CrossEntropyLoss()
        local first, loss
        for i = 1, 30 do
            opt:zero_grad()
            loss = lossf(model(x), y)
            loss:backward()
            opt:step()
            first = first or loss:item()
            assert.is_true(i > 1 or loss.device == dev)
        end
        for _, p in ipairs(model:parameters()) do
            assert.is_true(p.device == dev)
            assert.is_true(p.grad.device == dev)
            assert.is_true(opt.state[p].momentum_buffer.device == dev)
        end
        assert.is_true(loss:item() < 0.5 * first, first .. " -> " .. loss:item())
    end)

    it("an XOR net learns there", function()
        tide.manual_seed(3)
        local dev = tide.device(D.name)
        local model = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1)):to(dev)
        local x = tide.tensor({ { 0.0, 0.0 }, { 0.0, 1.0 }, { 1.0, 0.0 }, { 1.0, 1.0 } },
            { device = dev, dtype = "float32" })
        local y = tide.tensor({ { 0.0 }, { 1.0 }, { 1.0 }, { 0.0 } }, { device = dev })
        local opt = tide.optim.Adam(model:parameters(), { lr = 0.05 })
        local lossf = nn.BCEWithLogitsLoss()
        local loss
        for _ = 1, 300 do
            opt:zero_grad()
            loss = lossf(model(x), y)
            loss:backward()
            opt:step()
        end
        assert.is_true(loss:item() < 0.02, "final loss " .. loss:item())
        assert.is_true(opt.state[model[1].weight].exp_avg.device == dev)
    end)

    it("Dropout draws one mask (0 or 1/(1-p)) per element there, the CPU's numbers under a seed,"
        .. " and its gradient is that mask", function()
        for _, dtype in ipairs({ "float32", "float64" }) do
            for _, shape in ipairs({ { 1000 }, { 7, 13, 5 } }) do
                local x = tide.ones(shape, { device = D.name, dtype = dtype, requires_grad = true })
                tide.manual_seed(3)
                local y = nn.Dropout(0.25)(x)
                y:sum():backward()
                tide.manual_seed(3)
                local on_cpu = nn.Dropout(0.25)(tide.ones(shape, { dtype = dtype }))
                assert.are.equal(0, y:cpu():sub(on_cpu):abs():max():item())
                assert.are.equal(0, x.grad:sub(y:detach()):abs():max():item())
                local kept = 0
                for _, v in ipairs(y:cpu():reshape(-1):totable()) do
                    assert.is_true(v == 0 or math.abs(v - 4 / 3) < 1e-6, tostring(v))
                    kept = kept + (v == 0 and 0 or 1)
                end
                local n = y:numel()
                assert.is_true(math.abs(kept / n - 0.75) < 0.06, kept / n)
            end
        end
    end)

    it("a state dict saved there loads into a model elsewhere", function()
        local a = Net(8):to(D.name)
        local b = Net(8):to(D.other)
        b:load_state_dict(a:state_dict())
        close(b.fc1.weight, a.fc1.weight:cpu():reshape(-1):totable(), 0)
        assert.are.equal(tostring(tide.device(D.other)), tostring(b.fc1.weight.device))
    end)
end)

-- every error a user can cause carries the user's line (API.md: "script.lua:12: tide: add: ..."),
-- however many library frames and tail calls lie in between
describe("nn errors point at the user's line", function()
    local function raises_here(pattern, f, ...)
        local ok, err = pcall(f, ...)
        assert.is_false(ok)
        assert.matches("nn_spec%.lua:%d+: tide: " .. pattern, err)
    end

    it("losses", function()
        raises_here("CrossEntropyLoss: target 4 out of range", function()
            return nn.CrossEntropyLoss()(tide.zeros(2, 3), tide.tensor({ 1, 4 }))
        end)
        raises_here("NLLLoss: expected %(input, target%)", function()
            return nn.NLLLoss()(tide.zeros(2, 3))
        end)
        raises_here("MSELoss: expected target of the input's shape", function()
            return nn.MSELoss()(tide.zeros(2, 3), tide.zeros(3, 2))
        end)
        raises_here("BCEWithLogitsLoss: expected target", function()
            return nn.BCEWithLogitsLoss()(tide.zeros(2, 3), tide.zeros(3))
        end)
    end)

    it("layers and containers", function()
        raises_here("BatchNorm1d: expected more than 1 value", function()
            return nn.BatchNorm1d(4)(tide.zeros(1, 4))
        end)
        raises_here("MaxPool2d: kernel 2x2 is larger", function()
            return nn.MaxPool2d(2)(tide.zeros(1, 1, 1, 1))
        end)
        raises_here("Sequential: expected a Module, got number", function()
            return nn.Sequential(nn.ReLU(), 5)
        end)
    end)

    -- the exact position: this file and the line of the call, never a file of tide's
    it("device mismatches in every loss and layer: the module's name at the calling line", function()
        local dn, on = tostring(tide.device(D.name)), tostring(tide.device(D.other))
        local function at_line(line, msg, err)
            assert.are.equal("spec/nn_spec.lua:" .. line .. ": tide: " .. msg, err)
        end
        local x, y = tide.randn({ 4, 3 }, { device = D.other }), tide.randn({ 4, 3 }, { device = D.name })
        local t = tide.tensor({ 1, 2, 3, 1 }, { device = D.name })
        local same = "expected input and target on the same device, found " .. on .. " and " ..
            dn .. '; move one with :to("' .. dn .. '")'
        for _, name in ipairs({ "MSELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "NLLLoss" }) do
            local crit = nn[name]()
            local target = (name == "CrossEntropyLoss" or name == "NLLLoss") and t or y
            local line = debug.getinfo(1, "l").currentline + 1
            local ok, err = pcall(function() local l = crit(x, target) return l end)
            assert.is_false(ok)
            at_line(line, name .. ": " .. same, err)
        end
        local layers = {
            { nn.Linear(3, 2), tide.zeros({ 1, 3 }, { device = D.name }) },
            { nn.Conv2d(1, 1, 1), tide.zeros({ 1, 1, 2, 2 }, { device = D.name }) },
            { nn.Embedding(3, 2), tide.tensor({ 1, 2 }, { device = D.name }) },
            { nn.LayerNorm(3), tide.zeros({ 2, 3 }, { device = D.name }) },
            { nn.BatchNorm1d(3), tide.zeros({ 2, 3 }, { device = D.name }) },
            { nn.BatchNorm2d(3), tide.zeros({ 2, 3, 2, 2 }, { device = D.name }) },
            { nn.Sequential(nn.ReLU(), nn.Linear(3, 2)), tide.zeros({ 1, 3 }, { device = D.name }) },
        }
        for _, c in ipairs(layers) do
            local m, input = c[1]:to(D.other), c[2]
            local line = debug.getinfo(1, "l").currentline + 1
            local ok, err = pcall(function() local r = m(input) return r end)
            assert.is_false(ok)
            assert.matches("^spec/nn_spec%.lua:" .. line .. ": tide: %a+%d?d?: expected all " ..
                "tensors on the same device, found " .. dn:gsub("%p", "%%%0") .. " %(input%)", err)
        end
    end)

    it("a core error met inside a layer carries the user's line, not the layer's file", function()
        local x = tide.randn(2, 3)
        local line = debug.getinfo(1, "l").currentline + 1
        local ok, err = pcall(function() local y = nn.Softmax(5)(x) return y end)
        assert.is_false(ok)
        assert.are.equal("spec/nn_spec.lua:" .. line .. ": tide: softmax: dim 5 is out of range " ..
            "for a tensor with 2 dims; use 1..2 or -2..-1 (dims are 1-based)", err)
    end)

    it("a model fed an input on another device: the device error at the user's line", function()
        local m = nn.Sequential(nn.Linear(3, 2)):to(D.other)
        raises_here("Linear: expected all tensors on the same device", m,
            tide.zeros({ 1, 3 }, { device = D.name }))
        local c = nn.Conv2d(1, 1, 1):to(D.other)
        raises_here("Conv2d: expected all tensors on the same device", c,
            tide.zeros({ 1, 1, 2, 2 }, { device = D.name }))
        local e = nn.Embedding(3, 2):to(D.other)
        raises_here("Embedding: expected all tensors on the same device", e,
            tide.tensor({ 1, 2 }, { device = D.name }))
        local ln = nn.LayerNorm(3):to(D.other)
        raises_here("LayerNorm: expected all tensors on the same device", ln,
            tide.zeros({ 2, 3 }, { device = D.name }))
        local bn = nn.BatchNorm1d(3):to(D.other)
        raises_here("BatchNorm1d: expected all tensors on the same device", bn,
            tide.zeros({ 2, 3 }, { device = D.name }))
    end)
end)

-- API.md: unknown option keys raise everywhere; options listed there but not built say so
describe("nn options", function()
    local function err_of(f, ...)
        local ok, err = pcall(f, ...)
        assert.is_false(ok)
        return err
    end

    it("losses reject unknown keys", function()
        assert.matches('^spec/nn_spec%.lua:%d+: tide: MSELoss: unknown option "reductio" %(did ' ..
            'you mean "reduction"%?%)$', err_of(nn.MSELoss, { reductio = "sum" }))
        for _, name in ipairs({ "NLLLoss", "BCEWithLogitsLoss", "CrossEntropyLoss" }) do
            -- PyTorch's legacy reduce takes a boolean (spec/ported_scripts4_spec.lua)
            assert.matches("tide: " .. name .. ': reduce must be a boolean %(or nil%), got string "sum"',
                err_of(nn[name], { reduce = "sum" }))
        end
        -- built now (spec/nn_layers_spec.lua checks their values)
        local ce = nn.CrossEntropyLoss({ ignore_index = 2, label_smoothing = 0.1 })
        assert.are.equal(2, ce.ignore_index)
        assert.are.equal("sum", nn.MSELoss({ reduction = "sum" }).reduction)
    end)

    it("layers reject unknown keys", function()
        assert.matches('tide: Linear: unknown option "bais" %(did you mean "bias"%?%)',
            err_of(nn.Linear, 4, 2, { bais = false }))
        assert.matches('tide: Conv2d: unknown option "pading" %(did you mean "padding"%?%)',
            err_of(nn.Conv2d, 1, 2, 3, { pading = 1 }))
        assert.matches('tide: LayerNorm: unknown option "epsilon"',
            err_of(nn.LayerNorm, 4, { epsilon = 1e-3 }))
        assert.matches('tide: BatchNorm1d: unknown option "momentun" %(did you mean "momentum"%?%)',
            err_of(nn.BatchNorm1d, 4, { momentun = 0.2 }))
        assert.matches('tide: Module:to: unknown option "dtyp" %(did you mean "dtype"%?%)',
            err_of(function() local m = nn.Linear(2, 2):to({ dtyp = "float64" }) return m end))
    end)

    it("Linear(in, out, {bias = false}) has no bias parameter", function()
        local m = nn.Linear(4, 2, { bias = false })
        assert.is_nil(m.bias)
        assert.are.equal(1, #m:parameters())
        local keys = {}
        for k in pairs(m:state_dict()) do
            keys[#keys + 1] = k
        end
        assert.are.same({ "weight" }, keys)
        local x = tide.randn(3, 4)
        close(m(x), x:matmul(m.weight:t()):detach():reshape(-1):totable())
        assert.is_not_nil(nn.Linear(4, 2, { bias = true }).bias)
        assert.is_nil(nn.Linear(4, 2, false).bias)
    end)
end)
