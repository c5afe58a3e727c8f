-- ported_scripts110_spec.lua — rtqichen/torchdiffeq's fixed-grid solvers: torchdiffeq/_impl/
-- fixed_grid.py (Euler, Midpoint, RK4), rk_common.py (rk4_step_func, rk4_alt_step_func),
-- solvers.py (FixedGridODESolver: the grid from step_size, integrate, _linear_interp), misc.py
-- (Perturb, _PerturbFunc, _nextafter with _StitchGradient, _check_inputs for a tensor y0,
-- _check_timelike, _assert_increasing) and odeint.py's odeint reduced to those; and
-- examples/ode_demo.py (the spiral Lambda with true_A, get_batch, ODEFunc, RMSprop on the L1
-- loss, backprop through rk4), ported line for line at tiny sizes (data_size 20, batch_time 5,
-- batch_size 4). The Python line stands above each Lua line that differs from it.
-- Indices are 1-based (get_batch's s is ode_demo's plus one).
local tide = require("tide")
local nn = tide.nn
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- a tensor's values as a flat Lua list
local F32 = { dtype = "float32" }

-- fn raises an error whose message holds msg
local function raises(fn, msg)
    local ok, err = pcall(fn)
    assert.is_false(ok)
    err = type(err) == "table" and err.message or tostring(err)
    assert.is_truthy(err:find(msg, 1, true), err)
end

local function L(x)
    return x:detach():reshape(-1):tolist()
end

---------------------------------------------------------------------------------------------
-- 1. torchdiffeq/_impl/misc.py (the parts a tensor y0 and the fixed-grid solvers use)
---------------------------------------------------------------------------------------------
-- class Perturb(Enum): NONE = 0; PREV = 1; NEXT = 2
local Perturb = { NONE = "NONE", PREV = "PREV", NEXT = "NEXT" }

-- class _StitchGradient(torch.autograd.Function):
local _StitchGradient = tide.autograd.Function:extend("_StitchGradient")
-- def forward(ctx, x1, out): return out
function _StitchGradient.forward(_, _, out)
    return out
end
-- def backward(ctx, grad_out): return grad_out, None
function _StitchGradient.backward(_, grad_out)
    return grad_out, nil
end

-- def _nextafter(x1, x2):
local function _nextafter(x1, x2)
    local out
    -- with torch.no_grad(): out = torch.nextafter(x1, x2)
    tide.no_grad(function()
        out = tide.nextafter(x1, x2)
    end)
    return _StitchGradient.apply(x1, out)
end

-- class _PerturbFunc(torch.nn.Module):
local _PerturbFunc = nn.Module:extend("_PerturbFunc")
function _PerturbFunc:init(base_func)
    self.base_func = base_func
end
-- def forward(self, t, y, *, perturb=Perturb.NONE):
function _PerturbFunc:forward(t, y, perturb)
    perturb = perturb or Perturb.NONE
    -- assert isinstance(perturb, Perturb), "perturb argument must be of type Perturb enum"
    assert(Perturb[perturb], "perturb argument must be of type Perturb enum")
    -- t = t.to(y.abs().dtype)
    t = t:to(y:abs().dtype)
    if perturb == Perturb.NEXT then
        -- Replace with next smallest representable value.
        t = _nextafter(t, t + 1)
    elseif perturb == Perturb.PREV then
        -- Replace with prev largest representable value.
        t = _nextafter(t, t - 1)
    end
    return self.base_func(t, y)
end

local function _null_callback() end

-- def _assert_floating(name, t):
local function _assert_floating(name, t)
    -- if not torch.is_floating_point(t):
    if not tide.is_floating_point(t) then
        -- raise TypeError('`{}` must be a floating point Tensor but is a {}'
        --                 .format(name, t.type()))   (tide's dtype name for t.type())
        error(string.format("`%s` must be a floating point Tensor but is a %s", name, t.dtype))
    end
end

-- def _check_timelike(name, timelike, can_grad):
local function _check_timelike(name, timelike, can_grad)
    -- assert isinstance(timelike, torch.Tensor), '{} must be a torch.Tensor'.format(name)
    assert(tide.is_tensor(timelike), name .. " must be a torch.Tensor")
    _assert_floating(name, timelike)
    -- assert timelike.ndimension() == 1, "{} must be one dimensional".format(name)
    assert(timelike:dim() == 1, name .. " must be one dimensional")
    if not can_grad then
        assert(not timelike.requires_grad, name .. " cannot require gradient")
    end
    -- diff = timelike[1:] > timelike[:-1]
    local diff = timelike[{ { 2, -1 } }]:gt(timelike[{ { 1, -2 } }])
    -- assert diff.all() or (~diff).all(), '{} must be strictly increasing or decreasing'...
    assert(diff:all():item() or diff:logical_not():all():item(),
        name .. " must be strictly increasing or decreasing")
end

-- def _assert_increasing(name, t):
local function _assert_increasing(name, t)
    -- assert (t[1:] > t[:-1]).all(), '{} must be strictly increasing or decreasing'...
    assert(t[{ { 2, -1 } }]:gt(t[{ { 1, -2 } }]):all():item(),
        name .. " must be strictly increasing or decreasing")
end

-- def _check_inputs(func, y0, t, rtol, atol, method, options, event_fn, SOLVERS):
-- GAP: (not ported) event_fn, a tuple y0 (_TupleFunc, _tuple_tol), the norm option, decreasing
-- t (_ReverseFunc) and the adjoint callbacks: a tensor y0 and increasing t only, here.
local function _check_inputs(func, y0, t, rtol, atol, method, options, SOLVERS)
    local original_func = func
    -- is_tuple = not isinstance(y0, torch.Tensor)
    assert(tide.is_tensor(y0), "y0 must be a torch.Tensor (tuples are not ported)")
    -- options = {} if options is None else options.copy()
    local opts = {}
    for k, v in pairs(options or {}) do opts[k] = v end
    -- if method is None: method = 'dopri5'
    -- (dopri5 is not ported: the fixed-grid rk4 is the default here)
    method = method or "rk4"
    if not SOLVERS[method] then
        -- raise ValueError('Invalid method "{}". Must be one of {}'.format(method, ...))
        local names = {}
        for k in pairs(SOLVERS) do names[#names + 1] = k end
        table.sort(names)
        error(string.format('Invalid method "%s". Must be one of {"%s"}.', method,
            table.concat(names, '", "')))
    end
    _check_timelike("t", t, true)
    -- if len(t) > 1 and t[0] > t[1]: t_is_reversed = True
    assert(not (#t > 1 and t[1] > t[2]), "decreasing t is not ported")
    _assert_increasing("t", t)
    -- if t.device != y0.device: t = t.to(y0.device)
    if t.device ~= y0.device then
        t = t:to(y0.device)
    end
    -- func = _PerturbFunc(func)
    func = _PerturbFunc(func)
    -- callback = getattr(original_func, callback_name) ... setattr(func, callback_name, ...)
    func.callback_step = type(original_func) == "table" and original_func.callback_step
        or _null_callback
    return func, y0, t, rtol, atol, method, opts
end

---------------------------------------------------------------------------------------------
-- 2. torchdiffeq/_impl/rk_common.py
---------------------------------------------------------------------------------------------
local _one_third = 1 / 3
local _two_thirds = 2 / 3
local _one_sixth = 1 / 6

-- def rk4_step_func(func, t0, dt, t1, y0, f0=None, perturb=False):
local function rk4_step_func(func, t0, dt, t1, y0, f0, perturb)
    local k1 = f0
    if k1 == nil then
        k1 = func(t0, y0, perturb and Perturb.NEXT or Perturb.NONE)
    end
    local half_dt = dt * 0.5
    local k2 = func(t0 + half_dt, y0 + half_dt * k1)
    local k3 = func(t0 + half_dt, y0 + half_dt * k2)
    -- k4 = func(t1, y0 + dt * k3, perturb=Perturb.PREV if perturb else Perturb.NONE)
    local k4 = func(t1, y0 + dt * k3, perturb and Perturb.PREV or Perturb.NONE)
    return (k1 + 2 * (k2 + k3) + k4) * dt * _one_sixth
end

-- def rk4_alt_step_func(func, t0, dt, t1, y0, f0=None, perturb=False):
local function rk4_alt_step_func(func, t0, dt, t1, y0, f0, perturb)
    -- """Smaller error with slightly more compute."""
    local k1 = f0
    if k1 == nil then
        k1 = func(t0, y0, perturb and Perturb.NEXT or Perturb.NONE)
    end
    local k2 = func(t0 + dt * _one_third, y0 + dt * k1 * _one_third)
    local k3 = func(t0 + dt * _two_thirds, y0 + dt * (k2 - k1 * _one_third))
    local k4 = func(t1, y0 + dt * (k1 - k2 + k3), perturb and Perturb.PREV or Perturb.NONE)
    return (k1 + 3 * (k2 + k3) + k4) * dt * 0.125
end

---------------------------------------------------------------------------------------------
-- 3. torchdiffeq/_impl/solvers.py: FixedGridODESolver
---------------------------------------------------------------------------------------------
-- class FixedGridODESolver(metaclass=abc.ABCMeta):
local FixedGridODESolver = ported.class("FixedGridODESolver")

-- def __init__(self, func, y0, step_size=None, grid_constructor=None, interp="linear",
--              perturb=False, **unused_kwargs):
function FixedGridODESolver:__init__(o)
    -- self.atol = unused_kwargs.pop('atol')
    self.atol = o.atol
    self.func = o.func
    self.y0 = o.y0
    self.dtype = o.y0.dtype
    self.device = o.y0.device
    self.step_size = o.step_size
    self.interp = o.interp or "linear"
    self.perturb = o.perturb or false
    if o.step_size == nil then
        if o.grid_constructor == nil then
            -- self.grid_constructor = lambda f, y0, t: t
            self.grid_constructor = function(_, _, t) return t end
        else
            self.grid_constructor = o.grid_constructor
        end
    else
        if o.grid_constructor == nil then
            self.grid_constructor = self._grid_constructor_from_step_size(o.step_size)
        else
            error("step_size and grid_constructor are mutually exclusive arguments.")
        end
    end
end

-- @staticmethod def _grid_constructor_from_step_size(step_size):
function FixedGridODESolver._grid_constructor_from_step_size(step_size)
    return function(_, _, t)
        -- start_time = t[0]; end_time = t[-1]
        local start_time = t[1]
        local end_time = t[-1]
        -- niters = torch.ceil((end_time - start_time) / step_size + 1).item()
        local niters = tide.ceil((end_time - start_time) / step_size + 1):item()
        -- t_infer = torch.arange(0, niters, dtype=t.dtype, device=t.device) * step_size + ...
        local t_infer = tide.arange(0, niters, { dtype = t.dtype, device = t.device }) * step_size
            + start_time
        -- t_infer[-1] = t[-1]
        t_infer[-1] = t[-1]
        return t_infer
    end
end

-- def integrate(self, t):
function FixedGridODESolver:integrate(t)
    local time_grid = self.grid_constructor(self.func, self.y0, t)
    -- assert time_grid[0] == t[0] and time_grid[-1] == t[-1]
    assert(time_grid[1]:item() == t[1]:item() and time_grid[-1]:item() == t[-1]:item())

    -- solution = torch.empty(len(t), *self.y0.shape, dtype=self.y0.dtype, device=self.y0.device)
    local solution = tide.empty({ #t, unpack(self.y0:size()) },
        { dtype = self.y0.dtype, device = self.y0.device })
    -- solution[0] = self.y0
    solution[1] = self.y0

    -- j = 1
    local j = 2
    local y0 = self.y0
    -- for t0, t1 in zip(time_grid[:-1], time_grid[1:]):
    for i = 1, #time_grid - 1 do
        local t0, t1 = time_grid[i], time_grid[i + 1]
        local dt = t1 - t0
        self.func.callback_step(t0, y0, dt)
        local dy, f0 = self:_step_func(self.func, t0, dt, t1, y0)
        local y1 = y0 + dy

        -- while j < len(t) and t1 >= t[j]:
        while j <= #t and t1 >= t[j] do
            if self.interp == "linear" then
                solution[j] = self:_linear_interp(t0, t1, y0, y1, t[j])
            else
                -- GAP: (not ported) interp="cubic" (_cubic_hermite_interp)
                error(string.format("Unknown interpolation method %s", self.interp))
            end
            j = j + 1
        end
        y0 = y1
    end
    return solution
end

-- def _linear_interp(self, t0, t1, y0, y1, t):
function FixedGridODESolver:_linear_interp(t0, t1, y0, y1, t)
    -- if t == t0: return y0   (Lua's == on tensors is identity: compare the values)
    if t:item() == t0:item() then
        return y0
    end
    -- if t == t1: return y1
    if t:item() == t1:item() then
        return y1
    end
    local slope = (t - t0) / (t1 - t0)
    return y0 + slope * (y1 - y0)
end

---------------------------------------------------------------------------------------------
-- 4. torchdiffeq/_impl/fixed_grid.py
---------------------------------------------------------------------------------------------
-- Python's subclassing of a plain class: the instance's methods looked up in cls, then in base
local function subclass(base, name, fields)
    local cls = fields
    cls.__name, cls.__index = name, cls
    return setmetatable(cls, {
        __index = base,
        __call = function(c, ...)
            local o = setmetatable({}, c)
            o:__init__(...)
            return o
        end,
    })
end

-- class Euler(FixedGridODESolver): order = 1
local Euler = subclass(FixedGridODESolver, "Euler", { order = 1 })
-- def _step_func(self, func, t0, dt, t1, y0):
function Euler:_step_func(func, t0, dt, _, y0)
    -- f0 = func(t0, y0, perturb=Perturb.NEXT if self.perturb else Perturb.NONE)
    local f0 = func(t0, y0, self.perturb and Perturb.NEXT or Perturb.NONE)
    return dt * f0, f0
end

-- class Midpoint(FixedGridODESolver): order = 2
local Midpoint = subclass(FixedGridODESolver, "Midpoint", { order = 2 })
function Midpoint:_step_func(func, t0, dt, _, y0)
    local half_dt = 0.5 * dt
    local f0 = func(t0, y0, self.perturb and Perturb.NEXT or Perturb.NONE)
    local y_mid = y0 + f0 * half_dt
    return dt * func(t0 + half_dt, y_mid), f0
end

-- class RK4(FixedGridODESolver): order = 4
local RK4 = subclass(FixedGridODESolver, "RK4", { order = 4 })
function RK4:_step_func(func, t0, dt, t1, y0)
    local f0 = func(t0, y0, self.perturb and Perturb.NEXT or Perturb.NONE)
    -- return rk4_alt_step_func(func, t0, dt, t1, y0, f0=f0, perturb=self.perturb), f0
    return rk4_alt_step_func(func, t0, dt, t1, y0, f0, self.perturb), f0
end

---------------------------------------------------------------------------------------------
-- 5. torchdiffeq/_impl/odeint.py (the fixed-grid solvers only)
---------------------------------------------------------------------------------------------
-- GAP: (not ported) the adaptive (dopri5, ...), implicit and Adams solvers of SOLVERS
local SOLVERS = { euler = Euler, midpoint = Midpoint, rk4 = RK4 }

-- def odeint(func, y0, t, *, rtol=1e-7, atol=1e-9, method=None, options=None, event_fn=None):
local function odeint(func, y0, t, kw)
    kw = kw or {}
    assert(kw.event_fn == nil, "event_fn is not ported")
    local rtol, atol, method, options
    -- shapes, func, y0, t, rtol, atol, method, options, event_fn, t_is_reversed =
    --     _check_inputs(func, y0, t, rtol, atol, method, options, event_fn, SOLVERS)
    func, y0, t, rtol, atol, method, options = _check_inputs(func, y0, t, kw.rtol or 1e-7,
        kw.atol or 1e-9, kw.method, kw.options, SOLVERS)
    -- solver = SOLVERS[method](func=func, y0=y0, rtol=rtol, atol=atol, **options)
    local args = { func = func, y0 = y0, rtol = rtol, atol = atol }
    for k, v in pairs(options) do args[k] = v end
    local solver = SOLVERS[method](args)
    -- solution = solver.integrate(t)
    return solver:integrate(t)
end

---------------------------------------------------------------------------------------------
-- 6. examples/ode_demo.py
---------------------------------------------------------------------------------------------
-- parser.add_argument('--data_size' / '--batch_time' / '--batch_size', ...)
local args = { data_size = 20, batch_time = 5, batch_size = 4 }

-- true_y0 = torch.tensor([[2., 0.]]).to(device)
-- (the dtype named: Lua 5.1 and LuaJIT cannot tell 2. from 2 and would infer int64)
local true_y0 = tide.tensor({ { 2., 0. } }, { dtype = "float32" })
-- t = torch.linspace(0., 25., args.data_size).to(device)
local t = tide.linspace(0., 25., args.data_size)
-- true_A = torch.tensor([[-0.1, 2.0], [-2.0, -0.1]]).to(device)
local true_A = tide.tensor({ { -0.1, 2.0 }, { -2.0, -0.1 } }, { dtype = "float32" })

-- class Lambda(nn.Module):
local Lambda = nn.Module:extend("Lambda")
-- def forward(self, t, y):
function Lambda:forward(_, y)
    -- return torch.mm(y**3, true_A)
    return tide.mm(y ^ 3, true_A)
end

-- with torch.no_grad(): true_y = odeint(Lambda(), true_y0, t, method='dopri5')
-- (dopri5 is not ported: rk4 on a grid of step 0.03, within 1.2e-3 of dopri5's at every t)
local true_y
tide.no_grad(function()
    true_y = odeint(Lambda(), true_y0, t, { method = "rk4", options = { step_size = 0.03 } })
end)

-- def get_batch():
local function get_batch()
    -- s = torch.from_numpy(np.random.choice(np.arange(args.data_size - args.batch_time, ...),
    --                                       args.batch_size, replace=False))
    -- (fixed indices instead of np.random's draw: Python's [0, 3, 7, 12], 1-based)
    local s = tide.tensor({ 1, 4, 8, 13 }, { dtype = "int64" })
    local batch_y0 = true_y[s] -- (M, D)
    -- batch_t = t[:args.batch_time]  # (T)
    local batch_t = t[{ { 1, args.batch_time } }] -- (T)
    -- batch_y = torch.stack([true_y[s + i] for i in range(args.batch_time)], dim=0)  # (T, M, D)
    local ys = {}
    for i = 0, args.batch_time - 1 do
        ys[#ys + 1] = true_y[s + i]
    end
    local batch_y = tide.stack(ys, 1) -- (T, M, D)
    return batch_y0, batch_t, batch_y
end

-- class ODEFunc(nn.Module):
local ODEFunc = nn.Module:extend("ODEFunc")
function ODEFunc:init()
    self.net = nn.Sequential(
        nn.Linear(2, 50),
        nn.Tanh(),
        nn.Linear(50, 2)
    )
    -- for m in self.net.modules(): if isinstance(m, nn.Linear):
    --     nn.init.normal_(m.weight, mean=0, std=0.1); nn.init.constant_(m.bias, val=0)
    -- (formula weights instead of normal_'s draw, the same in the PyTorch check)
    local l1, l2 = self.net[1], self.net[3]
    local w1, w2 = {}, { {}, {} }
    for i = 0, 49 do
        w1[i + 1] = { 0.1 * math.sin(1 + 0.37 * i), 0.1 * math.sin(1 + 0.37 * i + 1.1) }
        for r = 0, 1 do
            w2[r + 1][i + 1] = 0.1 * math.cos(0.5 + 1.3 * r + 0.29 * i)
        end
    end
    tide.no_grad(function()
        l1.weight:copy_(tide.tensor(w1))
        l2.weight:copy_(tide.tensor(w2))
    end)
    nn.init.constant_(l1.bias, 0)
    nn.init.constant_(l2.bias, 0)
end
-- def forward(self, t, y):
function ODEFunc:forward(_, y)
    -- return self.net(y**3)
    return self.net(y ^ 3)
end

---------------------------------------------------------------------------------------------
-- checks against PyTorch 1.13 running torchdiffeq's own code (values to 7 decimals)
---------------------------------------------------------------------------------------------
describe("torchdiffeq fixed-grid solvers", function()
    it("rk4 with step_size 0.03 gives PyTorch's trajectory at t[1], t[5], t[12], t[19]", function()
        assert.are.same({ 20, 1, 2 }, true_y:size())
        assert_close_list({ 1.4337364, -0.0124259, -0.7194169, -0.6836376, 0.090815, -0.5685015,
            -0.4435734, 0.2796381 }, L(true_y[tide.tensor({ 2, 6, 13, 20 })]), 2e-4, "true_y")
    end)

    it("euler (step 0.01) and midpoint (step 0.03) give PyTorch's values", function()
        tide.no_grad(function()
            local ye = odeint(Lambda(), true_y0, t[{ { 1, 5 } }],
                { method = "euler", options = { step_size = 0.01 } })
            assert_close_list({ 2.0, 0.0, 0.8203787, 1.6392503, 1.386304, -0.0263324, -1.1414294,
                -0.7510035, 1.0557299, 0.2957826 }, L(ye), 2e-4, "euler")
            local ym = odeint(Lambda(), true_y0, t,
                { method = "midpoint", options = { step_size = 0.03 } })
            assert_close_list({ 1.4323213, 0.1033082, -0.6784978, -0.7235165, 0.1304038,
                -0.5676423, -0.4491111, 0.2526833 }, L(ym[tide.tensor({ 2, 6, 13, 20 })]), 2e-4,
                "midpoint")
        end)
    end)

    it("rk4 on the grid t itself, the two rk4 step functions, the grid constructor", function()
        tide.no_grad(function()
            local yg = odeint(Lambda(), true_y0, tide.linspace(0., 0.2, 3), { method = "rk4" })
            assert_close_list({ 2.0, 0.0, 1.7618171, 1.4336236, 0.6629184, 1.875242 }, L(yg),
                1e-5, "rk4 grid=t")
            local f = Lambda()
            local function fp(tt, y) return f(tt, y) end
            local y0 = tide.tensor({ { 0.5, -0.3 }, { 1.0, 0.2 } })
            local t0, dt = tide.tensor(0., F32), tide.tensor(0.1)
            assert_close_list({ 0.0034872, 0.0255166, -0.0156826, 0.1955566 },
                L(rk4_step_func(fp, t0, dt, dt, y0)), 1e-5, "rk4_step_func")
            assert_close_list({ 0.0034872, 0.0255166, -0.0156858, 0.195554 },
                L(rk4_alt_step_func(fp, t0, dt, dt, y0)), 1e-5, "rk4_alt_step_func")
            -- niters = ceil(25 / 0.03 + 1) = 835, the last point moved onto t[-1]
            local grid = FixedGridODESolver._grid_constructor_from_step_size(0.03)(nil, nil, t)
            assert.are.same({ 835 }, grid:size())
            assert_close_list({ 0, 0.03, 24.99, 25 }, L(grid[tide.tensor({ 1, 2, 834, 835 })]),
                1e-6, "grid")
        end)
    end)

    it("perturb=True moves t to nextafter (k1 up, k4 down) as PyTorch's", function()
        local seen = {}
        local function f(tt, y)
            seen[#seen + 1] = tt:item()
            return -y
        end
        odeint(f, tide.tensor({ 1. }, F32), tide.tensor({ 0., 0.1 }),
            { method = "rk4", options = { perturb = true } })
        assert.are.same(4, #seen)
        assert.are.equal(1.401298464324817e-45, seen[1])
        assert.are.equal(0.03333333507180214, seen[2])
        assert.are.equal(0.06666667014360428, seen[3])
        assert.are.equal(0.09999999403953552, seen[4])
    end)

    it("gradients reach y0 and t through the perturbed times (_StitchGradient)", function()
        local y0 = tide.tensor({ 1. }, { dtype = "float32", requires_grad = true })
        local tt = tide.tensor({ 0., 0.1 }, { requires_grad = true })
        local function f(ti, y) return -y * ti end
        local y = odeint(f, y0, tt, { method = "rk4", options = { perturb = true } })
        y[-1]:sum():backward()
        assert_close_list({ 0.9950124621391296 }, L(y[-1]), 1e-6, "y(0.1)")
        assert_close_list({ 0.9950124621391296 }, L(y0.grad), 1e-6, "y0.grad")
        assert_close_list({ 2.8312206268310547e-07, -0.09950166940689087 }, L(tt.grad), 1e-6,
            "t.grad")
    end)

    it("raises torchdiffeq's errors for a bad method and a non-increasing t", function()
        raises(function()
            odeint(Lambda(), true_y0, t, { method = "dopri9" })
        end, 'Invalid method "dopri9". Must be one of {"euler", "midpoint", "rk4"}.')
        raises(function()
            odeint(Lambda(), true_y0, tide.tensor({ 0., 1., 0.5 }), { method = "euler" })
        end, "t must be strictly increasing or decreasing")
        raises(function()
            odeint(Lambda(), true_y0, tide.tensor({ 0, 1 }, { dtype = "int64" }),
                { method = "euler" })
        end, "`t` must be a floating point Tensor but is a int64")
    end)
end)

describe("torchdiffeq examples/ode_demo.py", function()
    it("get_batch's tensors and ODEFunc's forward match PyTorch's", function()
        local batch_y0, batch_t, batch_y = get_batch()
        assert.are.same({ 4, 1, 2 }, batch_y0:size())
        assert.are.same({ 5 }, batch_t:size())
        assert.are.same({ 5, 4, 1, 2 }, batch_y:size())
        assert_close_list({ 2.0, 0.0, 1.020087, 0.1351015, 0.7204365, 0.2539878, 0.090815,
            -0.5685015 }, L(batch_y0), 2e-4, "batch_y0")
        assert_close_list({ 0.0, 1.3157895, 2.6315789, 3.9473684, 5.2631578 }, L(batch_t), 1e-6,
            "batch_t")
        assert_close_list({ -0.6446137, 0.8496383, 0.7204365, 0.2539878, -0.4112407, -0.555506,
            0.2801983, 0.4860929 }, L(batch_y[-1]), 2e-4, "batch_y[-1]")
        local func = ODEFunc()
        assert_close_list({ 0.5653188, 0.7159698, 0.0864477, 0.109129, 0.029827, 0.0397367,
            0.0083876, -0.0141478 }, L(func(0, batch_y0)), 1e-4, "forward")
    end)

    it("3 RMSprop steps through rk4 give PyTorch's losses and weights", function()
        local func = ODEFunc()
        -- optimizer = optim.RMSprop(func.parameters(), lr=1e-3)
        local optimizer = optim.RMSprop(func:parameters(), { lr = 1e-3 })
        local losses = {}
        for itr = 1, 3 do
            optimizer:zero_grad()
            local batch_y0, batch_t, batch_y = get_batch()
            -- pred_y = odeint(func, batch_y0, batch_t).to(device)   (rk4 for dopri5)
            local pred_y = odeint(func, batch_y0, batch_t, { method = "rk4" })
            -- loss = torch.mean(torch.abs(pred_y - batch_y))
            local loss = tide.mean(tide.abs(pred_y - batch_y))
            loss:backward()
            if itr == 1 then
                assert.are.same({ 5, 4, 1, 2 }, pred_y:size())
                assert_close_list({ 4.2936587, 6.4248257, 2.0728393, 2.1837544, 0.9441425,
                    0.5864792, 0.1463698, -0.6612818 }, L(pred_y[-1]), 1e-4, "pred_y[-1]")
                assert_close_list({ 2.4878683, -0.078621 }, L(func.net[3].bias.grad), 1e-4,
                    "grad b2")
            end
            optimizer:step()
            losses[itr] = loss:item()
            assert_finite(losses[itr], "loss")
        end
        assert_close_list({ 1.3378657, 0.7840532, 0.6171101 }, losses, 1e-4, "losses")
        assert_close_list({ 0.0650143, 0.0655095, 0.0796232, 0.0423145, 0.081799, 0.0312649 },
            L(func.net[1].weight[{ { 1, 3 } }]), 1e-4, "W1[:3]")
        assert_close_list({ -0.0153228, -0.0142036, -0.0123194, -0.0063131 },
            L(func.net[1].bias[{ { 1, 4 } }]), 1e-4, "b1[:4]")
        assert_close_list({ 0.0709534, 0.0534023, 0.0302605, 0.0034103, -0.0431775, -0.0701279,
            -0.0921326, -0.1075803 }, L(func.net[3].weight[{ {}, { 1, 4 } }]), 1e-4, "W2[:, :4]")
        assert_close_list({ -0.016513, -0.0060155 }, L(func.net[3].bias), 1e-4, "b2")
    end)
end)
