-- complex_parameter_spec.lua — complex nn.Parameters, as PyTorch 1.13's: a module registers
-- one, its optimizers step it through its real pair (view_as_real, as PyTorch's Adam, RMSprop,
-- Adagrad, ... step a complex parameter), Module:to moves it in place, state dicts save and load
-- it, gradient clipping measures its gradient's modulus. The values were computed with PyTorch
-- 1.13 (torch.float64 default) on the same weights: each is 0.3 * sin(0.731 * arange(n) +
-- 1.37 * k), a complex one taking the formula on its view_as_real.
local tide = require("tide")
local nn = tide.nn

local function init(shape, k)
    local n = 1
    for _, s in ipairs(shape) do
        n = n * s
    end
    return (tide.arange(n, { dtype = "float64" }) * 0.731 + 1.37 * k):sin():mul(0.3):view(shape)
end

-- PyTorch: w = Parameter(view_as_complex(init((3, 2, 2), 0))) (complex128), lin = Linear(2, 2);
-- forward(x) = lin((x.to(complex128) @ w).abs()).pow(2).sum()
local M = nn.Module:extend("ComplexWeights")
function M:init(real_view)
    nn.Module.init(self)
    self.real_view = real_view
    local w = init({ 3, 2, 2 }, 0)
    self.w = nn.Parameter(real_view and w or tide.view_as_complex(w))
    self.lin = nn.Linear(2, 2, { dtype = "float64" })
    tide.no_grad(function()
        self.lin.weight:copy_(init({ 2, 2 }, 1))
        self.lin.bias:copy_(init({ 2 }, 2))
    end)
end

function M:forward(x)
    local w = self.real_view and tide.view_as_complex(self.w) or self.w
    local z = tide.complex(x, tide.zeros_like(x)):matmul(w)
    return self.lin(z:abs()):pow(2):sum()
end

local X = init({ 4, 3 }, 3)

local function pair(p) -- a complex parameter's values as its real pair, flat, as a Lua list
    return tide.view_as_real(p:detach()):reshape(-1):cpu():totable()
end

local function close_list(expected, got, tol)
    assert.are.equal(#expected, #got)
    for i = 1, #expected do
        assert.is_true(math.abs(expected[i] - got[i]) <= tol,
            ("element %d: expected %.12g, got %.12g"):format(i, expected[i], got[i]))
    end
end

local function train(m, opt, steps)
    local loss
    for _ = 1, steps do
        opt:zero_grad()
        loss = m(X)
        loss:backward()
        opt:step()
    end
    return loss:item()
end

local function err(f)
    local ok, e = pcall(f)
    assert.is_false(ok)
    return tostring(e)
end

describe("nn.Parameter of a complex tensor", function()
    it("is a complex leaf that requires grad, shares z's storage and is an nn.Parameter", function()
        local z = tide.view_as_complex(init({ 2, 2 }, 0):float())
        local p = nn.Parameter(z)
        assert.are.equal("complex64", p.dtype)
        assert.is_true(p.requires_grad)
        assert.is_true(p.is_leaf)
        assert.is_true(tide.isinstance(p, nn.Parameter))
        assert.is_false(tide.isinstance(z, nn.Parameter))
        tide.no_grad(function() p:zero_() end) -- PyTorch's Parameter(t) shares t's storage
        assert.are.same({ 0, 0 }, z.real:totable())
        assert.is_false(nn.Parameter(z, false).requires_grad)
        assert.is_false(nn.Parameter(z, { requires_grad = false }).requires_grad)
    end)

    it("registers on a module: named_parameters, state_dict, a frozen one, register_parameter",
        function()
            local m = M(false)
            local names, dtypes = {}, {}
            for _, entry in ipairs(m:named_parameters()) do
                names[#names + 1], dtypes[#dtypes + 1] = entry[1], entry[2].dtype
            end
            -- PyTorch: ['w', 'lin.weight', 'lin.bias'], complex128 first
            assert.are.same({ "w", "lin.weight", "lin.bias" }, names)
            assert.are.same({ "complex128", "float64", "float64" }, dtypes)
            assert.is_true(rawequal(m.w, m:parameters()[1]))
            assert.are.equal(12, m:num_parameters()) -- PyTorch: sum(p.numel()) is 12
            local sd = m:state_dict()
            assert.are.equal("complex128", sd.w.dtype)
            assert.are.same({ 3, 2 }, { sd.w:size(1), sd.w:size(2) })
            assert.is_false(sd.w.requires_grad)
            m:register_parameter("v", nn.Parameter(tide.view_as_complex(tide.zeros(2, 2)), false))
            assert.are.equal(4, #m:parameters()) -- frozen, still a parameter
            m.u = tide.view_as_complex(tide.zeros(2, 2)):requires_grad_() -- a leaf that
            assert.are.equal(5, #m:parameters()) -- requires grad registers, as a real one
        end)

    it("view_as_complex of a parameter set as a field stays a plain field", function()
        local m = nn.Module()
        m.w = nn.Parameter(tide.zeros(3, 2))
        m.wc = tide.view_as_complex(m.w) -- the same storage as m.w: not a second parameter
        assert.are.equal(1, #m:parameters())
    end)

    it("backward gives PyTorch's gradient; clip_grad_norm_ measures its modulus", function()
        local m = M(false)
        m(X):backward()
        close_list({ 0.007104630438, 0.043665103259, 0.061339797564, 0.029735304969,
            -0.012926814796, 0.036416775834, 0.057355969059, 0.050930026304, -0.026352842787,
            0.010559997462, 0.02406406173, 0.046100233539 }, pair(m.w.grad), 1e-11)
        local norm = nn.utils.clip_grad_norm_(m:parameters(), 1.0)
        assert.is_true(math.abs(norm - 1.3525713261361678) < 1e-12, tostring(norm))
        close_list({ 0.005252680615, 0.032283008025, 0.045350475075, 0.021984262427,
            -0.009557207808, 0.026924087629, 0.042405103188, 0.037654198093, -0.019483499905,
            0.00780734402, 0.017791330833, 0.03408337776 }, pair(m.w.grad), 1e-11)
        -- the inf norm is the largest modulus |z| (torch.norm of a complex tensor), not the
        -- largest real or imaginary part
        local largest = m.w.grad:abs():max():item()
        local parts = tide.view_as_real(m.w.grad):abs():max():item()
        assert.is_true(largest > parts) -- (else the check below could not tell them apart)
        assert.are.equal(largest, nn.utils.clip_grad_norm_({ m.w }, 1e9, math.huge))
        nn.utils.clip_grad_value_({ m.w }, 0.01) -- each part clamped
        for _, v in ipairs(pair(m.w.grad)) do
            assert.is_true(math.abs(v) <= 0.01)
        end
        m:zero_grad()
        assert.is_nil(m.w.grad)
    end)
end)

describe("optimizers on a complex parameter", function()
    -- PyTorch 1.13, three steps each: loss of the last step, w as view_as_real, lin.weight
    it("SGD (nesterov momentum, weight decay) takes PyTorch's steps", function()
        local m = M(false)
        local opt = tide.optim.SGD(m:parameters(), { lr = 0.1, momentum = 0.9,
            weight_decay = 0.01, nesterov = true })
        assert.is_true(rawequal(m.w, opt.param_groups[1].params[1]))
        local loss = train(m, opt, 3)
        assert.is_true(math.abs(loss - 0.015176399692851311) < 1e-12, tostring(loss))
        close_list({ -0.000542495421, 0.192610908387, 0.287445921857, 0.237105588702,
            0.066271353909, -0.151577151155, -0.290016058668, -0.280767109234, -0.121895331522,
            0.084751745531, 0.250901148407, 0.286384521493 }, pair(m.w), 1e-11)
        close_list({ 0.287110990763, 0.249644373443, 0.093987598348, -0.11643499931 },
            m.lin.weight:detach():reshape(-1):totable(), 1e-11)
    end)

    it("Adam (weight decay) takes PyTorch's steps", function()
        local m = M(false)
        local opt = tide.optim.Adam(m:parameters(), { lr = 0.01, weight_decay = 0.01 })
        local loss = train(m, opt, 3)
        assert.is_true(math.abs(loss - 0.07104655121019621) < 1e-12, tostring(loss))
        close_list({ -0.030035383516, 0.170602052911, 0.268486948254, 0.214400863687,
            0.092583628383, -0.176599218358, -0.313823061059, -0.305388366371, -0.097222972412,
            0.061260608319, 0.22703502135, 0.26494793181 }, pair(m.w), 1e-11)
        close_list({ 0.264625134579, 0.229491140725, 0.120488711575, -0.093446412304 },
            m.lin.weight:detach():reshape(-1):totable(), 1e-11)
    end)

    -- every optimizer steps the complex parameter as it steps its real pair
    local CASES = {
        { "SGD", { lr = 0.1, momentum = 0.9, dampening = 0.1 } },
        { "Adam", { lr = 0.01, amsgrad = true } }, -- (PyTorch 1.13's amsgrad fails on complex)
        { "AdamW", { lr = 0.01 } },
        { "Adamax", { lr = 0.01 } },
        { "NAdam", { lr = 0.01 } },
        { "RAdam", { lr = 0.01 } },
        { "RMSprop", { lr = 0.01, momentum = 0.5, centered = true } },
        { "Adagrad", { lr = 0.1 } },
        { "Adadelta", { lr = 1.0 } },
        { "ASGD", { lr = 0.01 } },
        { "Rprop", { lr = 0.01 } },
        { "LBFGS", { lr = 0.5, max_iter = 4 } },
    }
    for _, case in ipairs(CASES) do
        it(case[1] .. " steps it as its view_as_real", function()
            local cls = tide.optim[case[1]]
            local got, want = M(false), M(true)
            local a, b = cls(got:parameters(), case[2]), cls(want:parameters(), case[2])
            for _ = 1, 3 do
                for _, pr in ipairs({ { got, a }, { want, b } }) do
                    local m, opt = pr[1], pr[2]
                    opt:step(function()
                        opt:zero_grad()
                        local loss = m(X)
                        loss:backward()
                        return loss
                    end)
                end
            end
            close_list(want.w:detach():reshape(-1):totable(), pair(got.w), 1e-13)
            close_list(want.lin.weight:detach():reshape(-1):totable(),
                got.lin.weight:detach():reshape(-1):totable(), 1e-13)
            -- the state is kept for the pair and saved under the parameter's number
            local sd, sd_real = a:state_dict(), b:state_dict()
            local keys = {}
            for k, v in pairs(sd_real) do
                keys[#keys + 1] = k
                if tide.is_tensor(v) and k:match("^state%.1%.") then
                    assert.is_true(tide.is_tensor(sd[k]), k)
                    assert.is_true(tide.allclose(v, sd[k], 0, 1e-13), k)
                end
            end
            for k in pairs(sd) do
                assert.is_not_nil(sd_real[k], k)
            end
        end)
    end

    it("a state dict saved, loaded into a new optimizer, resumes the same steps", function()
        local m1, m2 = M(false), M(false)
        local a = tide.optim.Adam(m1:parameters(), { lr = 0.01 })
        train(m1, a, 2)
        m2:load_state_dict(m1:state_dict())
        local path = os.tmpname()
        tide.save(a:state_dict(), path)
        local b = tide.optim.Adam(m2:parameters(), { lr = 0.01 })
        b:load_state_dict(tide.load(path))
        os.remove(path)
        assert.are.same(pair(m1.w), pair(m2.w))
        train(m1, a, 2)
        train(m2, b, 2)
        assert.are.same(pair(m1.w), pair(m2.w))
    end)

    it("a subclass's own step (Optimizer.init) gets the complex parameter itself", function()
        -- PyTorch: class MySGD(Optimizer): __init__: super().__init__(params, dict(lr=lr));
        -- step: for p in group['params']: p.data.add_(p.grad, alpha=-group['lr'])
        local MySGD = tide.optim.Optimizer:extend("MySGD")
        function MySGD:init(params, lr)
            tide.optim.Optimizer.init(self, params, { lr = lr })
        end
        function MySGD:step()
            tide.no_grad(function()
                for _, g in ipairs(self.param_groups) do
                    for _, p in ipairs(g.params) do
                        assert.are.equal("complex128", p.dtype)
                        self.state[p].steps = (self.state[p].steps or 0) + 1
                        p:sub_(p.grad:mul(g.lr))
                    end
                end
            end)
        end
        local m = M(false)
        local w = pair(m.w)
        local opt = MySGD({ m.w }, 0.5)
        m(X):backward()
        local g = pair(m.w.grad)
        opt:step()
        local want = {}
        for i = 1, #w do
            want[i] = w[i] - 0.5 * g[i]
        end
        close_list(want, pair(m.w), 1e-15)
        assert.are.equal(1, opt.state[m.w].steps)
    end)

    it("GradScaler unscales its gradient", function()
        local m = M(false)
        local opt = tide.optim.SGD(m:parameters(), { lr = 0.1 })
        local scaler = tide.amp.GradScaler({ init_scale = 4.0 })
        scaler:scale(m(X)):backward()
        local scaled = pair(m.w.grad)
        scaler:unscale_(opt)
        local got = pair(m.w.grad)
        for i = 1, #got do
            assert.is_true(math.abs(got[i] * 4 - scaled[i]) < 1e-15)
        end
    end)

    it("refuses one complex tensor in place of a list, as PyTorch's TypeError", function()
        local z = tide.view_as_complex(tide.zeros(2, 2)):requires_grad_()
        assert.matches("tide: SGD: expected a list of parameters (model:parameters()), got a " ..
            "tensor", err(function() return tide.optim.SGD(z, 0.1) end), 1, true)
        assert.is_not_nil(tide.optim.SGD({ { params = { z } } }, 0.1))
        -- a group's params may be one tensor (PyTorch wraps it in a list)
        local opt = tide.optim.SGD({ { params = z } }, 0.1)
        assert.is_true(rawequal(z, opt.param_groups[1].params[1]))
    end)
end)

describe("Module:to with a complex parameter", function()
    it("moves it in place with its gradient; the optimizer keeps stepping it", function()
        local m = M(false)
        local w = m.w
        local opt = tide.optim.Adam(m:parameters(), { lr = 0.01 })
        train(m, opt, 1)
        local before = pair(w)
        m:to("cpu:1")
        assert.is_true(rawequal(w, m.w))
        assert.are.equal("cpu:1", tostring(w.device))
        assert.are.equal("cpu:1", tostring(w.grad.device))
        assert.are.same(before, pair(w))
        opt:zero_grad()
        local loss = m(X:to("cpu:1"))
        loss:backward()
        opt:step()
        assert.are.equal("cpu:1", tostring(w.device))
        assert.are_not.same(before, pair(w))
    end)

    it("takes a float32 or float64 precision and keeps its dtype under float16", function()
        local m = M(false)
        m:float()
        assert.are.equal("complex64", m.w.dtype)
        assert.are.equal("float32", m.lin.weight.dtype)
        m:double()
        assert.are.equal("complex128", m.w.dtype)
        m:half() -- tide has no complex float16; PyTorch's half() leaves it too
        assert.are.equal("complex128", m.w.dtype)
        assert.are.equal("float16", m.lin.weight.dtype)
    end)

    it("load_state_dict copies a complex value in; a real one of the pair's shape is refused",
        function()
            local m = M(false)
            local z = tide.view_as_complex(init({ 3, 2, 2 }, 5))
            m:load_state_dict({ w = z, ["lin.weight"] = init({ 2, 2 }, 1), ["lin.bias"] =
                init({ 2 }, 2) })
            assert.are.same(tide.view_as_real(z):reshape(-1):totable(), pair(m.w))
            local before = pair(m.w)
            local e = err(function()
                m:load_state_dict({ w = init({ 3, 2, 2 }, 6), ["lin.weight"] = init({ 2, 2 }, 1),
                    ["lin.bias"] = init({ 2 }, 2) })
            end)
            assert.matches("tide: load_state_dict: size mismatch for 'w': the model has " ..
                "{3, 2}, the state dict has {3, 2, 2}; check the model's sizes", e, 1, true)
            assert.are.same(before, pair(m.w))
            local lin = m.lin.weight:detach():clone()
            e = err(function()
                m:load_state_dict({ w = z, ["lin.weight"] = tide.view_as_complex(init({ 2, 2, 2 },
                    1)), ["lin.bias"] = init({ 2 }, 2) })
            end)
            assert.matches("tide: load_state_dict: 'lin.weight' is a complex128 tensor in the " ..
                "state dict and float64 in the model, and copying it would drop its imaginary " ..
                "part; load v.real (or v:abs()) under that name", e, 1, true)
            assert.is_true(tide.equal(lin, m.lin.weight:detach()))
            -- assign = true makes the state dict's complex tensor the parameter
            m:load_state_dict({ w = z:clone(), ["lin.weight"] = init({ 2, 2 }, 1), ["lin.bias"] =
                init({ 2 }, 2) }, { assign = true })
            assert.is_true(tide.isinstance(m.w, nn.Parameter))
            assert.are.equal("complex128", m.w.dtype)
            assert.is_true(m.w.requires_grad)
        end)

    it("deepcopy gives a complex parameter of its own", function()
        local m = M(false)
        local c = tide.deepcopy(m)
        assert.are.equal("complex128", c.w.dtype)
        assert.is_true(tide.isinstance(c.w, nn.Parameter))
        assert.are.equal(3, #c:parameters())
        tide.no_grad(function() c.w:zero_() end)
        assert.are_not.same(pair(c.w), pair(m.w))
    end)

    it("parameters_to_vector promotes to complex; vector_to_parameters takes it back", function()
        local m = M(false)
        local v = nn.utils.parameters_to_vector(m:parameters())
        assert.are.equal("complex128", v.dtype) -- PyTorch: complex128
        assert.are.equal(1, v:dim())
        assert.are.equal(12, v:numel())
        local m2 = M(false)
        tide.no_grad(function()
            m2.w:zero_()
            m2.lin.weight:zero_()
        end)
        nn.utils.vector_to_parameters(v, m2:parameters())
        assert.are.same(pair(m.w), pair(m2.w))
        assert.are.same(m.lin.weight:detach():totable(), m2.lin.weight:detach():totable())
    end)
end)

describe("the rest of nn around a complex parameter", function()
    it("nn.init fills it as PyTorch's: each part U(a, b), N(mean, std / sqrt(2)); fans of its " ..
        "complex shape", function()
            tide.manual_seed(3)
            local w = nn.Parameter(tide.view_as_complex(tide.zeros(400, 250, 2,
                { dtype = "float64" })))
            assert.is_true(rawequal(w, nn.init.normal_(w, 3, 2)))
            for _, part in ipairs({ w.real, w.imag }) do
                assert.is_true(math.abs(part:mean():item() - 3) < 0.02)
                assert.is_true(math.abs(part:std():item() - math.sqrt(2)) < 0.02)
            end
            nn.init.uniform_(w, -1, 2)
            for _, part in ipairs({ w.real, w.imag }) do
                assert.is_true(part:min():item() >= -1 and part:max():item() < 2)
                assert.is_true(math.abs(part:mean():item() - 0.5) < 0.02)
            end
            -- xavier_uniform_: bound sqrt(6 / (fan_in + fan_out)) = sqrt(6 / 650) on each part
            nn.init.xavier_uniform_(w)
            local bound = math.sqrt(6 / 650)
            local top = tide.view_as_real(w:detach()):abs():max():item()
            assert.is_true(top <= bound and top > 0.99 * bound)
            nn.init.constant_(w, 0.5)
            assert.are.same({ 0.5, 0 }, tide.view_as_real(w:detach())[1][1]:totable())
            nn.init.ones_(w)
            assert.are.same({ 1, 0 }, tide.view_as_real(w:detach())[7][9]:totable())
            nn.init.eye_(w)
            assert.are.same({ 1, 0 }, tide.view_as_real(w:detach())[2][2]:totable())
            assert.are.same({ 0, 0 }, tide.view_as_real(w:detach())[2][3]:totable())
            nn.init.zeros_(w)
            assert.are.equal(0, tide.view_as_real(w:detach()):abs():sum():item())
            local before = pair(w)
            assert.matches("tide: nn.init.trunc_normal_: expected a real tensor, got a " ..
                "complex128 one; initialize its real pair, " ..
                "nn.init.trunc_normal_(tide.view_as_real(w))",
                err(function() nn.init.trunc_normal_(w) end), 1, true)
            assert.are.same(before, pair(w))
        end)

    it("z:fill_, z:uniform_ and z:normal_ are PyTorch's on a complex tensor", function()
        local z = tide.view_as_complex(tide.zeros(3, 2))
        assert.is_true(rawequal(z, z:fill_(2.5)))
        assert.are.same({ { 2.5, 0 }, { 2.5, 0 }, { 2.5, 0 } }, tide.view_as_real(z):totable())
        assert.matches("tide: fill_: a complex tensor is filled with a number, got",
            err(function() z:fill_("x") end), 1, true)
        tide.manual_seed(1)
        local a = tide.view_as_complex(tide.zeros(5, 2)):normal_(1, 2)
        tide.manual_seed(1)
        local b = tide.zeros(5, 2):normal_(1, 2 / math.sqrt(2)) -- the pair's draws
        assert.is_true(tide.equal(tide.view_as_real(a), b))
    end)

    it("ParameterList, ParameterDict, functional_call, p.data and p.grad take it", function()
        local z = tide.view_as_complex(init({ 2, 2 }, 0))
        local pl = nn.ParameterList({ z, tide.zeros(2) })
        assert.are.equal(2, #pl:parameters())
        assert.are.equal("complex128", pl[1].dtype)
        assert.is_true(tide.isinstance(pl[1], nn.Parameter))
        local pd = nn.ParameterDict({ a = z })
        assert.are.equal("complex128", pd.a.dtype)
        assert.are.equal(1, #pd:parameters())
        local m = M(false)
        local w2 = tide.view_as_complex(init({ 3, 2, 2 }, 7)):requires_grad_()
        local loss = nn.utils.stateless.functional_call(m, { w = w2 }, X)
        loss:backward()
        assert.is_not_nil(w2.grad)
        assert.is_nil(m.w.grad)
        assert.are.equal("complex128", m.w.dtype) -- its own back
        m.w.data:mul_(0) -- PyTorch's p.data, the values outside autograd
        assert.are.equal(0, tide.view_as_real(m.w:detach()):abs():sum():item())
        m.w.grad = tide.view_as_complex(tide.ones(3, 2, 2, { dtype = "float64" }))
        assert.are.same({ 1, 1 }, tide.view_as_real(m.w.grad)[1][1]:totable())
        m.w.grad = nil
        assert.is_nil(m.w.grad)
        assert.matches("tide: a complex tensor's grad is set to a complex tensor or nil, got",
            err(function() m.w.grad = tide.ones(3, 2, 2) end), 1, true)
    end)

    it("AveragedModel keeps its running mean", function()
        local m = nn.Module()
        m.w = nn.Parameter(tide.view_as_complex(tide.ones(2, 2)))
        local avg = tide.optim.swa_utils.AveragedModel(m)
        avg:update_parameters(m)
        tide.no_grad(function() m.w:mul_(3) end)
        avg:update_parameters(m)
        assert.are.same({ { 2, 2 }, { 2, 2 } }, tide.view_as_real(avg.module.w:detach()):totable())
    end)
end)

describe("complex and sparse buffers", function()
    it("register, move in place with the module, and load as PyTorch's", function()
        local m = nn.Module()
        local z = tide.view_as_complex(init({ 2, 2 }, 0))
        local s = tide.tensor({ { 0, 1.5 }, { 2, 0 } }, { dtype = "float64" }):to_sparse()
        m:register_buffer("z", z)
        m:register_buffer("s", s)
        assert.are.equal(2, #m:buffers())
        assert.is_true(rawequal(s, m:buffers()[2]))
        local sd = m:state_dict() -- PyTorch: both persistent, in state_dict
        assert.are.equal("complex128", sd.z.dtype)
        assert.is_true(sd.s.is_sparse)
        m:to("cpu:1")
        assert.is_true(rawequal(z, m.z) and rawequal(s, m.s))
        assert.are.equal("cpu:1", tostring(z.device))
        assert.are.equal("cpu:1", tostring(s.device))
        assert.are.equal("cpu:1", tostring(s:indices().device))
        m:float()
        assert.are.equal("complex64", z.dtype)
        assert.are.equal("float32", s.dtype)
        assert.are.equal("float32", s:values().dtype)
        assert.are.equal("int64", s:indices().dtype)
        m:to("cpu")
        local other = tide.tensor({ { 3, 0 }, { 0, 4 } }, { dtype = "float64" }):to_sparse()
        m:load_state_dict({ z = z * 2, s = other })
        assert.is_true(rawequal(s, m.s))
        assert.are.same({ { 3, 0 }, { 0, 4 } }, s:to_dense():totable())
        assert.are.equal("float32", s.dtype)
        local e = err(function() m:load_state_dict({ z = z, s = tide.ones(2, 2) }) end)
        assert.matches("tide: load_state_dict: 's' is a dense tensor in the state dict and a " ..
            "sparse one in the model; convert it with v:to_sparse()", e, 1, true)
        assert.are.same({ { 3, 0 }, { 0, 4 } }, s:to_dense():totable())
    end)
end)
