-- nn containers (Identity, ModuleList, ModuleDict), Module traversal (apply, modules,
-- named_modules, named_children, register_buffer), nn.init and nn.utils' gradient clipping
local tide = require("tide")
local nn = require("tide.nn")
local autograd = require("tide.autograd")

local function raises_here(pattern, f, ...)
    local ok, err = pcall(f, ...)
    assert.is_false(ok)
    assert.matches("nn_containers_spec%.lua:%d+: tide: " .. pattern, err)
end

local function keys(sd)
    local r = {}
    for k in pairs(sd) do
        r[#r + 1] = k
    end
    return r
end

describe("nn containers", function()
    it("Identity returns its input, and ignores constructor arguments", function()
        local x = tide.tensor({ 1, 2 })
        local id = nn.Identity(54, { unused = true })
        assert.is_true(rawequal(id(x), x))
        assert.are.same({}, id:parameters())
    end)

    it("ModuleList registers its modules as children 1..n, named as Sequential's #lua53", function()
        local ml = nn.ModuleList({ nn.Linear(2, 3), nn.ReLU() })
        ml:append(nn.Linear(3, 1))
        assert.are.equal(3, #ml)
        assert.are.equal("Linear", ml[3].__name)
        local names = {}
        for i, m in ipairs(ml) do
            names[i] = m.__name
        end
        assert.are.same({ "Linear", "ReLU", "Linear" }, names)
        local Net = nn.Module:extend("Net")
        function Net:init()
            self.layers = ml
        end
        local sd = Net():state_dict()
        assert.are.same({ "layers.1.weight", "layers.1.bias", "layers.3.weight", "layers.3.bias" },
            keys(sd))
        assert.are.same(keys(nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)):state_dict()),
            keys(ml:state_dict()))
        assert.are.equal(4, #Net():parameters())
    end)

    it("ModuleList extend and insert keep names in order", function()
        local a, b, c = nn.ReLU(), nn.Tanh(), nn.Sigmoid()
        local ml = nn.ModuleList()
        ml:extend({ a, c })
        ml:insert(2, b)
        assert.are.equal(3, #ml)
        assert.is_true(rawequal(ml[2], b) and rawequal(ml[3], c))
        local order = {}
        for name, m in ml:named_children() do
            order[#order + 1] = name .. "=" .. m.__name
        end
        assert.are.same({ "1=ReLU", "2=Tanh", "3=Sigmoid" }, order)
        raises_here("ModuleList:insert: index 9 out of range 1..4", function()
            return ml:insert(9, nn.ReLU())
        end)
        raises_here("ModuleList:append: expected a Module, got number", function()
            return ml:append(3)
        end)
        raises_here("ModuleList: has no forward", function()
            return ml(tide.zeros(1))
        end)
    end)

    it("ModuleDict keeps modules by name, in the order given #lua53", function()
        local md = nn.ModuleDict({ { "enc", nn.Linear(2, 2) }, { "act", nn.ReLU() } })
        assert.are.equal("Linear", md.enc.__name)
        assert.are.same({ "enc", "act" }, md:keys())
        assert.are.equal(2, #md)
        assert.is_true(md:contains("act"))
        assert.is_false(md:contains("dec"))
        md:update({ dec = nn.Linear(2, 1) })
        assert.are.same({ "enc", "act", "dec" }, md:keys())
        assert.are.same({ "enc.weight", "enc.bias", "dec.weight", "dec.bias" }, keys(md:state_dict()))
        local sorted = nn.ModuleDict({ b = nn.ReLU(), a = nn.Tanh() })
        assert.are.same({ "a", "b" }, sorted:keys())
        local vals = sorted:values()
        assert.are.equal("Tanh", vals[1].__name)
        assert.are.equal("b", sorted:items()[2][1])
        raises_here("ModuleDict:update: the name 'train' is a method or field of ModuleDict", function()
            return nn.ModuleDict({ train = nn.ReLU() })
        end)
        raises_here("ModuleDict:update: expected a Module for 'x', got number", function()
            return nn.ModuleDict({ x = 1 })
        end)
    end)
end)

describe("Module traversal", function()
    local function tree()
        local shared = nn.Linear(2, 2)
        local m = nn.Sequential(shared, nn.Sequential(nn.ReLU(), shared))
        return m, shared
    end

    it("modules() and named_modules() list self first, depth first, each module once", function()
        local m = tree()
        local mods = m:modules()
        assert.are.equal(4, #mods)
        assert.is_true(rawequal(mods[1], m))
        local names = {}
        for name, mod in m:named_modules() do
            names[#names + 1] = name .. ":" .. mod.__name
        end
        assert.are.same({ ":Sequential", "1:Linear", "2:Sequential", "2.1:ReLU" }, names)
        assert.are.equal("2.1", m:named_modules()[4][1])
    end)

    it("named_children lists direct children only", function()
        local m = tree()
        local names = {}
        for name in m:named_children() do
            names[#names + 1] = name
        end
        assert.are.same({ "1", "2" }, names)
    end)

    it("apply visits children before their parent and returns the module", function()
        local m = tree()
        local seen = {}
        local r = m:apply(function(mod)
            seen[#seen + 1] = mod.__name
        end)
        assert.is_true(rawequal(r, m))
        assert.are.same({ "Linear", "ReLU", "Linear", "Sequential", "Sequential" }, seen)
        raises_here("Module:apply: expected a function of a module, got nil", function()
            return m:apply()
        end)
    end)

    it("apply with nn.init re-initializes every Linear", function()
        local m = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
        m:apply(function(mod)
            if mod.__name == "Linear" then
                nn.init.constant_(mod.weight, 0.5)
                nn.init.zeros_(mod.bias)
            end
        end)
        assert.are.same({ 0.5, 0.5, 0.5, 0.5 }, m[3].weight[1]:totable())
        assert.are.same({ 0, 0 }, m[3].bias:totable())
        assert.is_true(m[3].weight.requires_grad)
    end)

    it("register_buffer puts a tensor in state_dict but not in parameters #lua53", function()
        local M = nn.Module:extend("WithBuffer")
        function M:init()
            self.lin = nn.Linear(2, 2)
            self:register_buffer("steps", tide.zeros(1))
        end
        local m = M()
        assert.are.same({ "steps", "lin.weight", "lin.bias" }, keys(m:state_dict()))
        assert.are.equal(2, #m:parameters())
        assert.are.equal(1, #m:buffers())
        raises_here("register_buffer: expected a tensor for 'x', got number", function()
            return m:register_buffer("x", 3)
        end)
    end)
end)

-- mean and std of a tensor's values
local function stats(t)
    local v = t:double():view(-1)
    local n = v:numel()
    local mean = v:sum():item() / n
    local var = (v - mean):pow(2):sum():item() / (n - 1)
    return mean, math.sqrt(var), v:min():item(), v:max():item()
end

describe("nn.init", function()
    before_each(function()
        tide.manual_seed(7)
    end)

    it("uniform_, normal_, constant_, zeros_, ones_", function()
        local t = tide.empty(200, 100)
        local mean, std, lo, hi = stats(nn.init.uniform_(t, -2, 3))
        assert.is_true(lo >= -2 and hi <= 3)
        assert.is_true(math.abs(mean - 0.5) < 0.05)
        assert.is_true(math.abs(std - 5 / math.sqrt(12)) < 0.03)
        mean, std = stats(nn.init.normal_(t, { mean = 1, std = 3 }))
        assert.is_true(math.abs(mean - 1) < 0.1 and math.abs(std - 3) < 0.05)
        local _, _, lo2, hi2 = stats(nn.init.constant_(t, 1.25))
        assert.are.equal(1.25, lo2)
        assert.are.equal(1.25, hi2)
        assert.are.equal(0, nn.init.zeros_(t):abs():sum():item())
        assert.are.equal(20000, nn.init.ones_(t):sum():item())
    end)

    it("xavier_uniform_ and xavier_normal_ use (fan_in + fan_out) and the gain", function()
        -- conv-like weight {64, 32, 3, 3}: fan_in 288, fan_out 576
        local w = tide.empty(64, 32, 3, 3)
        local gain = nn.init.calculate_gain("tanh")
        local _, std, lo, hi = stats(nn.init.xavier_uniform_(w, gain))
        local bound = gain * math.sqrt(6 / (288 + 576))
        assert.is_true(lo >= -bound and hi <= bound and hi > 0.98 * bound)
        assert.is_true(math.abs(std - bound / math.sqrt(3)) < 0.02 * bound)
        _, std = stats(nn.init.xavier_normal_(w, { gain = 2 }))
        assert.is_true(math.abs(std - 2 * math.sqrt(2 / 864)) < 0.02 * 2 * math.sqrt(2 / 864))
    end)

    it("kaiming_uniform_ and kaiming_normal_ follow mode, a and the nonlinearity", function()
        local w = tide.empty(300, 200)
        local _, _, lo, hi = stats(nn.init.kaiming_uniform_(w, { a = math.sqrt(5) }))
        -- PyTorch's Linear default: bound 1/sqrt(fan_in)
        local bound = 1 / math.sqrt(200)
        assert.is_true(lo >= -bound - 1e-7 and hi <= bound + 1e-7 and hi > 0.98 * bound)
        local _, std = stats(nn.init.kaiming_normal_(w, 0, "fan_out", "relu"))
        local want = math.sqrt(2) / math.sqrt(300)
        assert.is_true(math.abs(std - want) < 0.02 * want)
        _, std = stats(nn.init.kaiming_normal_(w))
        want = math.sqrt(2) / math.sqrt(200) -- leaky_relu with a = 0
        assert.is_true(math.abs(std - want) < 0.02 * want)
        raises_here('nn.init.kaiming_normal_: mode fan_avg is not supported', function()
            return nn.init.kaiming_normal_(w, { mode = "fan_avg" })
        end)
        raises_here("nn.init.calculate_gain: unsupported nonlinearity softsign", function()
            return nn.init.kaiming_normal_(w, { nonlinearity = "softsign" })
        end)
        raises_here('nn.init.kaiming_uniform_: unknown option "mod" %(did you mean "mode"%?%)', function()
            return nn.init.kaiming_uniform_(w, { mod = "fan_in" })
        end)
        raises_here("nn.init.kaiming_uniform_: fan in and fan out cannot be computed for a " ..
            "tensor with fewer than 2 dimensions %(shape {5}%)", function()
            return nn.init.kaiming_uniform_(tide.zeros(5))
        end)
    end)

    it("calculate_gain matches PyTorch's table", function()
        local g = nn.init.calculate_gain
        assert.are.equal(1, g("linear"))
        assert.are.equal(1, g("conv2d"))
        assert.are.equal(5 / 3, g("tanh"))
        assert.are.equal(math.sqrt(2), g("relu"))
        assert.are.equal(math.sqrt(2 / (1 + 0.01 ^ 2)), g("leaky_relu"))
        assert.are.equal(math.sqrt(2 / (1 + 0.2 ^ 2)), g("leaky_relu", 0.2))
        assert.are.equal(0.75, g("selu"))
    end)

    -- max |M M^T - gain^2 I| for the smaller side
    local function ortho_error(t, gain)
        local m = t:double():view(t:size(1), -1)
        if m:size(1) > m:size(2) then
            m = m:t()
        end
        local p = m:matmul(m:t())
        local e = p - tide.eye(m:size(1), { dtype = "float64" }) * (gain * gain)
        return e:abs():max():item()
    end

    it("orthogonal_ gives orthonormal rows or columns, tall, wide and 4-d", function()
        local tall = nn.init.orthogonal_(tide.empty(50, 20, { dtype = "float64" }))
        assert.is_true(ortho_error(tall, 1) < 1e-12)
        local wide = nn.init.orthogonal_(tide.empty(20, 50, { dtype = "float64" }), 2)
        assert.is_true(ortho_error(wide, 2) < 1e-12)
        local conv = nn.init.orthogonal_(tide.empty(8, 3, 2, 2), { gain = 0.5 })
        assert.is_true(ortho_error(conv, 0.5) < 1e-6)
        assert.are.same({ 8, 3, 2, 2 }, conv.shape)
        -- reproducible from tide's generator
        tide.manual_seed(3)
        local a = nn.init.orthogonal_(tide.empty(4, 4)):totable()
        tide.manual_seed(3)
        assert.are.same(a, nn.init.orthogonal_(tide.empty(4, 4)):totable())
        raises_here("nn.init.orthogonal_: only tensors with 2 or more dimensions are supported", function()
            return nn.init.orthogonal_(tide.zeros(3))
        end)
    end)

    it("trunc_normal_, eye_ and dirac_ as PyTorch's", function()
        -- PyTorch 1.13 (seed 1, 10^6 draws): min -0.99999, max 2.99999, mean 0.7122, std 1.0576
        tide.manual_seed(1)
        local t = nn.init.trunc_normal_(tide.empty(200000, { dtype = "float64" }),
            { std = 2, a = -1, b = 3 })
        assert.is_true(t:min():item() >= -1 and t:max():item() <= 3)
        assert.is_true(math.abs(t:mean():item() - 0.7122) < 0.01)
        assert.is_true(math.abs(t:std():item() - 1.0576) < 0.01)
        assert.are.same({ { 1, 0, 0 }, { 0, 1, 0 } }, nn.init.eye_(tide.empty(2, 3)):totable())
        -- PyTorch's nonzero positions, plus one
        assert.are.same({ { 1, 1, 2, 2 }, { 2, 2, 2, 2 } },
            nn.init.dirac_(tide.empty(2, 3, 3, 3)):nonzero():totable())
        assert.are.same({ { 1, 1, 2 }, { 2, 2, 2 }, { 3, 1, 2 }, { 4, 2, 2 } },
            nn.init.dirac_(tide.empty(4, 2, 3), 2):nonzero():totable())
        -- an empty weight with any number of groups (a fuzz finding: a loop over 2^31 groups)
        assert.are.same({ 0, 4, 3 }, nn.init.dirac_(tide.empty(0, 4, 3), 2147483648).shape)
        raises_here("nn.init.eye_: only 2%-D tensors are supported, got 3%-D", function()
            return nn.init.eye_(tide.empty(2, 2, 2))
        end)
        raises_here("nn.init.trunc_normal_: expected a < b, got a = 2, b = 1", function()
            return nn.init.trunc_normal_(tide.empty(2), { a = 2, b = 1 })
        end)
    end)

    it("fills parameters in place on their device without recording", function()
        local p = tide.zeros({ 3, 4 }, { device = "cpu:1", requires_grad = true })
        local r = nn.init.orthogonal_(p)
        assert.is_true(rawequal(r, p))
        assert.are.equal("cpu:1", tostring(p.device))
        assert.is_true(p.requires_grad and p.is_leaf)
        assert.is_true(ortho_error(p:cpu(), 1) < 1e-6)
        nn.init.xavier_uniform_(p)
        assert.is_nil(p.grad_fn)
        raises_here("nn.init.uniform_: expected a tensor, got nil", function()
            return nn.init.uniform_(nil)
        end)
    end)
end)

describe("nn.utils gradient clipping", function()
    local function params_with_grads(gs)
        local ps = {}
        for i, g in ipairs(gs) do
            ps[i] = tide.zeros({ #g }, { dtype = "float64", requires_grad = true })
            autograd.set_grad(ps[i], tide.tensor(g, { dtype = "float64" }))
        end
        return ps
    end

    it("clip_grad_norm_ scales by max_norm / (total + 1e-6) and returns the total", function()
        local ps = params_with_grads({ { 3, 0 }, { 0, 4 } })
        local total = nn.utils.clip_grad_norm_(ps, 1.0)
        assert.are.equal(5, total)
        local c = 1 / (5 + 1e-6)
        assert.are.same({ 3 * c, 0 }, ps[1].grad:totable())
        assert.are.same({ 0, 4 * c }, ps[2].grad:totable())
        -- below max_norm: unchanged
        ps = params_with_grads({ { 3, 0 }, { 0, 4 } })
        assert.are.equal(5, nn.utils.clip_grad_norm_(ps, 10))
        assert.are.same({ 3, 0 }, ps[1].grad:totable())
    end)

    it("clip_grad_norm_ with norm_type 1, 3 and inf", function()
        local ps = params_with_grads({ { 3, -1 }, { 0, 4 } })
        assert.are.equal(8, nn.utils.clip_grad_norm_(ps, 100, 1))
        local t3 = nn.utils.clip_grad_norm_(ps, 100, 3)
        assert.is_true(math.abs(t3 - (27 + 1 + 64) ^ (1 / 3)) < 1e-12)
        ps = params_with_grads({ { 3, -1 }, { 0, -4 } })
        assert.are.equal(4, nn.utils.clip_grad_norm_(ps, 2, math.huge))
        assert.is_true(math.abs(ps[2].grad[2]:item() + 4 * 2 / (4 + 1e-6)) < 1e-15)
        assert.are.equal(4, nn.utils.clip_grad_norm_(params_with_grads({ { -4 } }), 9, "inf"))
    end)

    it("clip_grad_norm_ takes a module or a tensor, skips missing gradients", function()
        local m = nn.Linear(2, 2)
        assert.are.equal(0, nn.utils.clip_grad_norm_(m, 1))
        m(tide.ones(1, 2)):sum():backward()
        local total = nn.utils.clip_grad_norm_(m, 0.5)
        -- dW = ones(2,2), db = ones(2): norm sqrt(6)
        assert.is_true(math.abs(total - math.sqrt(6)) < 1e-6)
        local n2 = 0
        for _, p in ipairs(m:parameters()) do
            n2 = n2 + p.grad:pow(2):sum():item()
        end
        assert.is_true(math.abs(math.sqrt(n2) - 0.5) < 1e-5)
        raises_here("clip_grad_norm_: norm_type 0 is not supported", function()
            return nn.utils.clip_grad_norm_(m, 1, 0)
        end)
        raises_here("clip_grad_norm_: expected max_norm to be a number, got nil", function()
            return nn.utils.clip_grad_norm_(m)
        end)
    end)

    it("clip_grad_value_ clamps in place", function()
        local ps = params_with_grads({ { 3, -0.2 }, { -4, 0.1 } })
        nn.utils.clip_grad_value_(ps, 0.5)
        assert.are.same({ 0.5, -0.2 }, ps[1].grad:totable())
        assert.are.same({ -0.5, 0.1 }, ps[2].grad:totable())
        raises_here("clip_grad_value_: expected clip_value to be a number, got string", function()
            return nn.utils.clip_grad_value_(ps, "x")
        end)
    end)
end)

-- Lua calls __newindex for an absent key only: a field init first set to a plain value and then
-- to a Module or an nn.Parameter was a plain field, its parameters missing from parameters()
-- and state_dict() without an error (karpathy's MADE: self.net = [] ... self.net =
-- nn.Sequential(*self.net); RealNVP's AffineHalfFlow: a lambda, then an MLP)
describe("a field init turns from a plain value into a Module", function()
    local Flow = nn.Module:extend("Flow")
    function Flow:init(scale)
        self.net = {}
        self.net[#self.net + 1] = nn.Linear(2, 3)
        self.net = nn.Sequential(table.unpack and table.unpack(self.net) or unpack(self.net))
        self.s_cond = function(x) return x:mul(0) end
        if scale then
            self.s_cond = nn.Linear(3, 3)
        end
        self.w = 0
        self.w = nn.Parameter(tide.ones(2))
        self.dim = 2
    end

    it("is registered when init returns, in the order of first assignments", function()
        local f = Flow(true)
        local names = {}
        for _, pair in ipairs(f:named_parameters()) do -- {name, value} (5.1 has no __pairs)
            names[#names + 1] = pair[1]
        end
        assert.are.same({ "w", "net.1.weight", "net.1.bias", "s_cond.weight", "s_cond.bias" },
            names)
        assert.are.equal(5, #f:parameters())
        assert.is_not_nil(f:state_dict()["s_cond.weight"])
        assert.are.equal(2, #f:children())
        assert.is_nil(rawget(f, "_plain"))
        assert.are.equal(2, f.dim)
        local plain = Flow(false) -- s_cond stays a function, not a child
        assert.are.equal(3, #plain:parameters())
        assert.are.equal("function", type(plain.s_cond))
    end)
end)

-- every parameter a module registers is an nn.Parameter, as in PyTorch (whose register_parameter
-- takes Parameters only): tide.isinstance says so, copies keep it, and a plain tensor assigned
-- over one after construction (which Lua's __newindex does not see) is named when the
-- parameters are listed, where PyTorch's assignment raises, instead of silently not training
describe("a module's parameters are nn.Parameters", function()
    it("for tide.isinstance, in copies too", function()
        local m = nn.Linear(2, 2)
        assert.is_true(tide.isinstance(m.weight, nn.Parameter))
        assert.is_true(tide.isinstance(nn.Parameter(tide.ones(2)), nn.Parameter))
        assert.is_false(tide.isinstance(tide.ones(2), nn.Parameter))
        assert.is_false(tide.isinstance(m, nn.Parameter))
        assert.is_true(tide.isinstance(m.weight, { nn.Linear, nn.Parameter }))
        assert.is_true(tide.isinstance(m.weight, tide.Tensor))
        local Raw = nn.Module:extend("Raw")
        function Raw:init()
            self.w = tide.ones({ 2 }, { requires_grad = true }) -- registered by requires_grad
            self:register_parameter("v", tide.zeros(2))
        end
        local r = Raw()
        assert.is_true(tide.isinstance(r.w, nn.Parameter))
        assert.is_true(tide.isinstance(r.v, nn.Parameter))
        -- a frozen copy (a DQN's target network) is a Parameter still: it registers elsewhere
        local target = tide.deepcopy(m)
        target.weight:requires_grad_(false)
        assert.is_true(tide.isinstance(target.weight, nn.Parameter))
        local host = nn.Module()
        host.w = target.weight
        assert.are.equal(1, #host:parameters())
    end)

    it("a plain tensor assigned over one raises when they are listed", function()
        local m = nn.Sequential(nn.Linear(2, 2))
        m[1].weight = tide.ones(2, 2)
        raises_here("Linear.weight was set to a plain tensor after it was registered as a " ..
            "parameter %(PyTorch refuses m.weight = t%); assign nn.Parameter%(t%), or copy the " ..
            "values into the parameter: m.weight.data:copy_%(t%)", function()
                return m[1]:parameters()
            end)
        raises_here("1.weight was set to a plain tensor after it was registered as a " ..
            "parameter %(PyTorch refuses m.1.weight = t%)", function()
                return m:named_parameters()
            end)
        raises_here("1.weight was set to a plain tensor", function()
            return tide.optim.SGD(m:parameters(), { lr = 0.1 })
        end)
        -- PyTorch's ways: a new Parameter, or None
        m[1].weight = nn.Parameter(tide.ones(2, 2))
        assert.are.equal(2, #m:parameters())
        m[1].bias = nil
        assert.are.equal(1, #m:parameters())
        assert.are.equal(m[1].weight, m:parameters()[1])
    end)
end)
