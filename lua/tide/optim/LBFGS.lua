-- tide.optim.LBFGS(params, {lr = 1, max_iter = 20, max_eval = max_iter * 5 / 4 (floored),
-- tolerance_grad = 1e-7, tolerance_change = 1e-9, history_size = 100, line_search_fn = nil |
-- "strong_wolfe"}): PyTorch 1.13's L-BFGS, line for line (torch/optim/lbfgs.py), over the
-- parameters flattened into one vector. opt:step(closure) calls closure() (with gradients
-- enabled) as PyTorch's does: the closure zeroes the gradients, computes the loss, calls
-- backward and returns the loss; step returns the first loss. One parameter group; every
-- parameter on one device, in one dtype. The state, PyTorch's, is kept on the first parameter;
-- its history (old_dirs, old_stps: lists of vectors) saves as {k, n} tensors, ro and al (the
-- two-loop recursion's coefficients, PyTorch's state['al']) as lists.
local compat = require("tide._compat")
local core = require("tide.core")
local autograd = require("tide.autograd")
local Optimizer = require("tide.optim.Optimizer")
local base_state_dict = require("tide.optim.state_dict")
local raise = autograd.raise
local is_tensor = autograd.is_tensor

local LBFGS = Optimizer:extend("LBFGS", {
    lr = 1, max_iter = 20, tolerance_grad = 1e-7, tolerance_change = 1e-9, history_size = 100,
}, {
    "lr", "max_iter", "max_eval", "tolerance_grad", "tolerance_change",
    "history_size", "line_search_fn",
})

LBFGS.speed_options = {} -- (PyTorch's LBFGS takes no foreach, fused, ...)
LBFGS.nonnegative = { "tolerance_grad", "tolerance_change" }
LBFGS.scalar_state = { func_evals = true, n_iter = true, t = true, H_diag = true,
    prev_loss = true }

local KNOWN = { "lr", "max_iter", "max_eval", "tolerance_grad", "tolerance_change",
    "history_size", "line_search_fn" }

-- v as an integer >= 1 (an integral float, 20.0, is that integer)
local function positive_integer(v, what)
    local i = type(v) == "number" and compat.tointeger(v) or nil
    if i == nil or i < 1 then
        raise(string.format("tide: LBFGS: expected %s to be an integer >= 1, got %s", what,
            tostring(v)))
    end
    return i
end

function LBFGS:add_param_group()
    raise("tide: LBFGS:add_param_group: parameter groups are not supported (PyTorch's neither); " ..
        "make the LBFGS with every parameter in one list")
end

function LBFGS.new(cls, params, opts)
    if opts ~= nil and type(opts) ~= "table" then
        raise("tide: LBFGS: expected an options table such as {lr = 1}, got " .. type(opts))
    end
    opts = opts or {}
    core._check_options(opts, "LBFGS", KNOWN)
    local rest = {}
    for k, v in pairs(opts) do
        if k ~= "max_eval" and k ~= "line_search_fn" then
            rest[k] = v
        end
    end
    local self = Optimizer.new(cls, params, rest)
    if #self.param_groups ~= 1 then
        raise("tide: LBFGS: parameter groups are not supported (PyTorch's neither); pass one " ..
            "list of parameters")
    end
    local g = self.param_groups[1]
    g.max_iter = positive_integer(g.max_iter, "max_iter")
    g.history_size = positive_integer(g.history_size, "history_size")
    local max_eval = opts.max_eval
    if max_eval == nil then
        max_eval = math.floor(g.max_iter * 5 / 4)
    elseif type(max_eval) ~= "number" then
        raise("tide: LBFGS: expected max_eval to be a number, got " .. type(max_eval))
    end
    local ls = opts.line_search_fn
    if ls ~= nil and ls ~= "strong_wolfe" then
        raise("tide: LBFGS: line_search_fn must be nil or \"strong_wolfe\", got " ..
            (type(ls) == "string" and '"' .. ls .. '"' or type(ls)))
    end
    g.max_eval, g.line_search_fn = max_eval, ls
    self.defaults.max_eval, self.defaults.line_search_fn = max_eval, ls -- PyTorch's defaults
    local ps = g.params
    local function p_dtype(p) -- a complex parameter's is its real pair's (what LBFGS steps)
        return Optimizer.real_param(p).dtype
    end
    for i = 2, #ps do
        if ps[i].device ~= ps[1].device or p_dtype(ps[i]) ~= p_dtype(ps[1]) then
            raise(string.format("tide: LBFGS: every parameter on one device in one dtype, " ..
                "found %s %s (parameter 1) and %s %s (parameter %d); move the model with " ..
                "model:to()", tostring(ps[1].device), ps[1].dtype, tostring(ps[i].device),
                ps[i].dtype, i))
        end
    end
    return self
end

-- ---- the flat vector of the parameters ----

-- the gradients as one vector, each checked first (shape, device: Optimizer:check_step)
local function gather_flat_grad(self, params)
    self:check_step()
    local views = {}
    for i, p in ipairs(params) do
        local g = p.grad
        views[i] = g and g:reshape(-1) or
            core.zeros({ p:numel() }, { device = p.device, dtype = p.dtype })
    end
    return core.cat(views, 1)
end

-- p += step_size * update (the update's slice for p)
local function add_grad(params, step_size, update)
    local offset = 0
    for _, p in ipairs(params) do
        local n = p:numel()
        if n > 0 then
            p:add_(update:narrow(1, offset + 1, n):view(p.shape), step_size)
        end
        offset = offset + n
    end
end

local function clone_params(params)
    local r = {}
    for i, p in ipairs(params) do
        r[i] = p:clone()
    end
    return r
end

local function set_params(params, data)
    for i, p in ipairs(params) do
        p:copy_(data[i])
    end
end

local function dot(a, b)
    return a:mul(b):sum():item()
end

local function abs_max(v)
    return v:numel() > 0 and v:abs():max():item() or 0
end

-- the loss a closure returned, as a number (a tensor of one element or a number)
local function loss_value(v)
    if is_tensor(v) then
        if v:numel() ~= 1 then
            raise("tide: LBFGS: step: the closure returned a tensor of " .. v:numel() ..
                " elements; return the loss (one element)")
        end
        return v:item()
    elseif type(v) == "number" then
        return v
    end
    raise("tide: LBFGS: step: the closure must return the loss, got " .. type(v))
end

-- ---- the line search (PyTorch's _cubic_interpolate and _strong_wolfe) ----

local function cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds)
    local xmin_bound, xmax_bound
    if bounds then
        xmin_bound, xmax_bound = bounds[1], bounds[2]
    elseif x1 <= x2 then
        xmin_bound, xmax_bound = x1, x2
    else
        xmin_bound, xmax_bound = x2, x1
    end
    local d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    local d2_square = d1 ^ 2 - g1 * g2
    if d2_square >= 0 then
        local d2 = math.sqrt(d2_square)
        local min_pos
        if x1 <= x2 then
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        end
        return math.min(math.max(min_pos, xmin_bound), xmax_bound)
    end
    return (xmin_bound + xmax_bound) / 2
end

local function strong_wolfe(obj_func, x, t, d, f, g, gtd, tolerance_change)
    local c1, c2, max_ls = 1e-4, 0.9, 25
    local d_norm = abs_max(d)
    g = g:clone()
    local f_new, g_new = obj_func(x, t, d)
    local ls_func_evals = 1
    local gtd_new = dot(g_new, d)
    local t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    local done = false
    local ls_iter = 0
    local bracket, bracket_f, bracket_g, bracket_gtd
    while ls_iter < max_ls do
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev) then
            bracket, bracket_f = { t_prev, t }, { f_prev, f_new }
            bracket_g, bracket_gtd = { g_prev, g_new:clone() }, { gtd_prev, gtd_new }
            break
        end
        if math.abs(gtd_new) <= -c2 * gtd then
            bracket, bracket_f, bracket_g = { t }, { f_new }, { g_new }
            done = true
            break
        end
        if gtd_new >= 0 then
            bracket, bracket_f = { t_prev, t }, { f_prev, f_new }
            bracket_g, bracket_gtd = { g_prev, g_new:clone() }, { gtd_prev, gtd_new }
            break
        end
        local min_step = t + 0.01 * (t - t_prev)
        local max_step = t * 10
        local tmp = t
        t = cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, { min_step, max_step })
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new:clone(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals = ls_func_evals + 1
        gtd_new = dot(g_new, d)
        ls_iter = ls_iter + 1
    end
    if ls_iter == max_ls then
        bracket, bracket_f, bracket_g = { 0, t }, { f, f_new }, { g, g_new }
    end
    -- zoom: refine the bracket (1-based: low and high are 1 or 2)
    local insuf_progress = false
    local low, high = 1, 2
    if not (bracket_f[1] <= bracket_f[#bracket_f]) then
        low, high = 2, 1
    end
    while not done and ls_iter < max_ls do
        if math.abs(bracket[2] - bracket[1]) * d_norm < tolerance_change then
            break
        end
        t = cubic_interpolate(bracket[1], bracket_f[1], bracket_gtd[1], bracket[2], bracket_f[2],
            bracket_gtd[2])
        local bmax, bmin = math.max(bracket[1], bracket[2]), math.min(bracket[1], bracket[2])
        local eps = 0.1 * (bmax - bmin)
        if math.min(bmax - t, t - bmin) < eps then
            if insuf_progress or t >= bmax or t <= bmin then
                if math.abs(t - bmax) < math.abs(t - bmin) then
                    t = bmax - eps
                else
                    t = bmin + eps
                end
                insuf_progress = false
            else
                insuf_progress = true
            end
        else
            insuf_progress = false
        end
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals = ls_func_evals + 1
        gtd_new = dot(g_new, d)
        ls_iter = ls_iter + 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low] then
            bracket[high], bracket_f[high] = t, f_new
            bracket_g[high], bracket_gtd[high] = g_new:clone(), gtd_new
            if bracket_f[1] <= bracket_f[2] then
                low, high = 1, 2
            else
                low, high = 2, 1
            end
        else
            if math.abs(gtd_new) <= -c2 * gtd then
                done = true
            elseif gtd_new * (bracket[high] - bracket[low]) >= 0 then
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            end
            bracket[low], bracket_f[low] = t, f_new
            bracket_g[low], bracket_gtd[low] = g_new:clone(), gtd_new
        end
    end
    return bracket_f[low], bracket_g[low], bracket[low], ls_func_evals
end

-- ---- the step ----

local HISTORY = { "old_dirs", "old_stps" }

local function run(self, closure)
    local group = self.param_groups[1]
    local params = {} -- complex parameters as their real pairs (Optimizer.real_param)
    for i, p in ipairs(group.params) do
        params[i] = Optimizer.real_param(p)
    end
    local lr, max_iter, max_eval = group.lr, group.max_iter, group.max_eval
    local tolerance_grad, tolerance_change = group.tolerance_grad, group.tolerance_change
    local history_size = group.history_size
    local function evaluate()
        local prev = core.set_grad_enabled(true)
        local ok, v = pcall(closure)
        core.set_grad_enabled(prev)
        if not ok then
            error(v, 0)
        end
        return v
    end
    local state = self:state_of(params[1])
    local p1 = params[1]
    for _, k in ipairs(HISTORY) do -- state_of moves the state's tensors, not these lists
        for i, v in ipairs(state[k] or {}) do
            if v.device ~= p1.device or v.dtype ~= p1.dtype then
                state[k][i] = v:to(p1.dtype):to(p1.device)
            end
        end
    end
    state.func_evals = state.func_evals or 0
    state.n_iter = state.n_iter or 0

    local orig_loss = evaluate()
    local loss = loss_value(orig_loss)
    local current_evals = 1
    state.func_evals = state.func_evals + 1
    local flat_grad = gather_flat_grad(self, params)
    if abs_max(flat_grad) <= tolerance_grad then
        return orig_loss
    end
    local d, t = state.d, state.t
    local old_dirs, old_stps, ro = state.old_dirs, state.old_stps, state.ro
    local H_diag, prev_flat_grad, prev_loss = state.H_diag, state.prev_flat_grad, state.prev_loss
    local opt_cond
    local n_iter = 0
    while n_iter < max_iter do
        n_iter = n_iter + 1
        state.n_iter = state.n_iter + 1
        -- the descent direction
        if state.n_iter == 1 then
            d = flat_grad:neg()
            old_dirs, old_stps, ro = {}, {}, {}
            H_diag = 1
        else
            local y = flat_grad:sub(prev_flat_grad)
            local s = d:mul(t)
            local ys = dot(y, s)
            if ys > 1e-10 then
                if #old_dirs == history_size then -- the oldest pair makes room
                    table.remove(old_dirs, 1)
                    table.remove(old_stps, 1)
                    table.remove(ro, 1)
                end
                old_dirs[#old_dirs + 1] = y
                old_stps[#old_stps + 1] = s
                ro[#ro + 1] = 1 / ys
                H_diag = ys / dot(y, y)
            end
            -- the two-loop recursion: the inverse Hessian estimate times the gradient
            local num_old = #old_dirs
            -- PyTorch's state['al'] (its list of history_size slots; the slots never written
            -- are its Nones, left out here)
            local al = state.al or {}
            state.al = al
            local q = flat_grad:neg()
            for i = num_old, 1, -1 do
                al[i] = dot(old_stps[i], q) * ro[i]
                q:add_(old_dirs[i], -al[i])
            end
            local r = q:mul(H_diag)
            for i = 1, num_old do
                local be_i = dot(old_dirs[i], r) * ro[i]
                r:add_(old_stps[i], al[i] - be_i)
            end
            d = r
        end
        if prev_flat_grad == nil then
            prev_flat_grad = flat_grad:clone()
        else
            prev_flat_grad:copy_(flat_grad)
        end
        prev_loss = loss
        -- the step length
        if state.n_iter == 1 then
            t = math.min(1, 1 / flat_grad:abs():sum():item()) * lr
        else
            t = lr
        end
        local gtd = dot(flat_grad, d)
        if gtd > -tolerance_change then
            break
        end
        local ls_func_evals = 0
        if group.line_search_fn ~= nil then
            local x_init = clone_params(params)
            local function obj_func(x, step, dir)
                add_grad(params, step, dir)
                local f = loss_value(evaluate())
                local g = gather_flat_grad(self, params)
                set_params(params, x)
                return f, g
            end
            loss, flat_grad, t, ls_func_evals = strong_wolfe(obj_func, x_init, t, d, loss,
                flat_grad, gtd, tolerance_change)
            add_grad(params, t, d)
            opt_cond = abs_max(flat_grad) <= tolerance_grad
        else
            add_grad(params, t, d)
            if n_iter ~= max_iter then
                loss = loss_value(evaluate())
                flat_grad = gather_flat_grad(self, params)
                opt_cond = abs_max(flat_grad) <= tolerance_grad
                ls_func_evals = 1
            end
        end
        current_evals = current_evals + ls_func_evals
        state.func_evals = state.func_evals + ls_func_evals
        -- the stopping conditions
        if n_iter == max_iter or current_evals >= max_eval or opt_cond then
            break
        end
        if abs_max(d:mul(t)) <= tolerance_change or math.abs(loss - prev_loss) <
                tolerance_change then
            break
        end
    end
    state.d, state.t = d, t
    state.old_dirs, state.old_stps, state.ro = old_dirs, old_stps, ro
    state.H_diag, state.prev_flat_grad, state.prev_loss = H_diag, prev_flat_grad, prev_loss
    return orig_loss
end

function LBFGS:step(closure)
    if type(closure) ~= "function" and not (getmetatable(closure) or {}).__call then
        raise("tide: LBFGS: step: expected a closure (a function that zeroes the gradients, " ..
            "computes the loss, calls backward and returns the loss), got " ..
            (is_tensor(closure) and "tide.Tensor" or type(closure)))
    end
    local prev = core.set_grad_enabled(false)
    local ok, res = pcall(run, self, closure)
    core.set_grad_enabled(prev)
    if not ok then
        error(res, 0)
    end
    return res
end

-- ---- state dict: the history lists as {k, n} tensors, ro and al as lists of numbers ----

local NUMBER_LISTS = { "ro", "al" }

function LBFGS:state_dict()
    local p = self.param_groups[1].params[1]
    p = p and Optimizer.real_param(p)
    local st = p and self.state[p]
    if not st then
        return base_state_dict.state_dict(self)
    end
    local flat = {}
    for k, v in pairs(st) do
        flat[k] = v
    end
    for _, k in ipairs(HISTORY) do
        local list = st[k]
        flat[k] = list and #list > 0 and core.stack(list, 1) or nil
    end
    for _, k in ipairs(NUMBER_LISTS) do
        local list = st[k]
        if list then
            flat[k] = #list > 0 and core.tensor(list, { dtype = "float64", device = "cpu" }) or nil
        end
    end
    self.state[p] = flat
    local ok, sd = pcall(base_state_dict.state_dict, self)
    self.state[p] = st
    if not ok then
        error(sd, 0)
    end
    return sd
end

function LBFGS:load_state_dict(sd)
    base_state_dict.load_state_dict(self, sd)
    local p = self.param_groups[1].params[1]
    p = p and Optimizer.real_param(p)
    local st = p and self.state[p]
    if not st then
        return
    end
    if st.n_iter ~= nil and st.n_iter > 0 then -- a run's history: lists (empty when not saved)
        for _, k in ipairs(HISTORY) do
            local m, list = st[k], {}
            for i = 1, m and m:size(1) or 0 do
                list[i] = m:select(1, i):clone()
            end
            st[k] = list
        end
        st.ro = st.ro and st.ro:to("float64"):cpu():totable() or {}
        st.al = st.al and st.al:to("float64"):cpu():totable() or nil
    end
end

return LBFGS
